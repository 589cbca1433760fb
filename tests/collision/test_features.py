"""The feature-id bit layout (collision/features.py): every field round-trips at its extremes without spilling
into its neighbours, and the families are told apart."""

import pytest

from tumble.collision import features as ft

LINE_MAX = ft.LINE_SIDE | 4095  # a side plane with the largest face-local index


@pytest.mark.parametrize("fields", [(0, 0, 0, 0, 0), (1, 4095, 8191, LINE_MAX, LINE_MAX), (1, 0, 8191, 0, LINE_MAX),
                                    (0, 4095, 0, LINE_MAX, 0), (1, 2047, 4092, 17, ft.LINE_SIDE | 3)])
def test_face_clip_ids_round_trip_at_the_field_extremes(fields):
    feature = ft.face_clip(*fields)
    assert feature >= 0  # the sign bit stays clear
    assert ft.decode_face_clip(feature) == fields
    assert ft.family(feature) == "face-clip"


def test_every_family_is_told_apart_and_fields_do_not_spill():
    top = (1 << 26) - 1
    ids = {"face-clip": ft.face_clip(1, 4095, 8191, LINE_MAX, LINE_MAX), "edge-edge": ft.edge_edge(top, top),
           "deepest-vertex": ft.deepest_vertex(1, 4095, top), "vertex": ft.vertex(top),
           "closest": ft.closest(ft.CLOSEST_REGION, top), "capsule-end": ft.capsule_end(top, 8191, 8191),
           "curved": ft.CURVED_ID}
    for name, feature in ids.items():
        assert ft.family(feature) == name and feature >= 0
    # neighbouring fields at their maxima still give distinct ids when one of them changes
    assert ft.edge_edge(top, 0) != ft.edge_edge(0, top) != ft.edge_edge(top - 1, top)
    assert ft.face_clip(0, 4095, 0, 0, 0) != ft.face_clip(1, 0, 0, 0, 0)
    assert ft.POINT_ID == ft.closest(ft.CLOSEST_NONE, 0)
