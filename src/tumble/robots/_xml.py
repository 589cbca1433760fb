"""What the URDF and MJCF readers share: reading an XML file with line numbers, numbers from attributes,
rotations, and error messages that name the file, the line and the element.

The parser is the standard library's expat (``xml.parsers.expat``, which ``xml.etree.ElementTree`` itself uses)
driving an ``ElementTree.TreeBuilder``, so that each element keeps the line it starts on. Two harmless
departures from strict XML that files written for PyBullet (whose TinyXML accepts them) contain are accepted:
white space before the XML declaration (pybullet_data's biped2d_pybullet.urdf) and NUL bytes after the root
element (pybullet_data's humanoid/humanoid.urdf).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

import numpy as np

from ..rotations import rpy_to_matrix

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
"""A decimal number as XML files write them (no ``nan``, ``inf``, hexadecimal or ``1_000``)."""


class Document:
    """A parsed XML file: ``root`` (an ``ElementTree.Element``), ``path`` and each element's line."""

    def __init__(self, path: Path, root: ET.Element, lines: dict[int, int]) -> None:
        self.path = path
        self.root = root
        self._lines = lines

    def line(self, element: ET.Element) -> int:
        """The line [1-based] on which ``element``'s start tag begins (0 if unknown)."""
        return self._lines.get(id(element), 0)

    def where(self, element: ET.Element, context: str = "") -> str:
        """``'FILE line N: <tag name="NAME">'`` (and ``context``, e.g. ``' in <link name="arm">'``) for messages."""
        name = element.get("name")
        tag = f'<{element.tag} name="{name}">' if name is not None else f"<{element.tag}>"
        return f"{self.path} line {self.line(element)}: {tag}{context}"

    def error(self, element: ET.Element, message: str, context: str = "") -> ValueError:
        """A ``ValueError`` whose message starts with ``where(element, context)``."""
        return ValueError(f"{self.where(element, context)}: {message}")


def read(path: str | Path, root_tag: str, kind: str) -> Document:
    """Parse ``path`` and check that its root element is ``<root_tag>``.

    Raises:
        ValueError: ``path`` is not a file, cannot be read, is not well-formed XML (the message gives expat's
            line and column), or its root element is not ``<root_tag>`` (``kind`` names the format, e.g. "URDF").
    """
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"{file}: no such {kind} file" + (" (it is a folder)" if file.is_dir() else ""))
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ValueError(f"{file}: cannot read the {kind} file: {exc.strerror or exc}") from None
    data = data.lstrip().rstrip(b"\x00 \t\r\n")
    lines: dict[int, int] = {}
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.buffer_text = True

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
        root = builder.close()
    except expat.ExpatError as exc:
        raise ValueError(f"{file} line {exc.lineno} column {exc.offset + 1}: not well-formed XML, so not a "
                         f"{kind} file: {expat.ErrorString(exc.code)}") from None
    except AssertionError:   # TreeBuilder.close on an empty document
        raise ValueError(f"{file}: holds no XML element, so is not a {kind} file") from None
    doc = Document(file, root, lines)
    if root.tag != root_tag:
        raise doc.error(root, f"the root element must be <{root_tag}> in a {kind} file")
    return doc


def numbers(doc: Document, element: ET.Element, attribute: str, count: int, default: tuple[float, ...] | None,
            context: str = "") -> np.ndarray:
    """The ``count`` numbers (float64 array) of ``element``'s ``attribute``, white-space separated; ``default``
    when it is absent (``None``: it is required).

    Raises:
        ValueError: the attribute is missing and required, holds another count of values, or one of them is not
            a finite decimal number; the message names the file, line, element, attribute and value.
    """
    text = element.get(attribute)
    if text is None:
        if default is None:
            raise doc.error(element, f"the attribute {attribute} is required", context)
        return np.array(default, dtype=float)
    parts = text.split()
    if len(parts) != count or not all(_NUMBER.fullmatch(p) for p in parts):
        what = "a number" if count == 1 else f"{count} numbers"
        raise doc.error(element, f"{attribute}={text!r} must be {what}", context)
    values = np.array([float(p) for p in parts])
    if not np.all(np.isfinite(values)):
        raise doc.error(element, f"{attribute}={text!r} is out of the floating-point range", context)
    return values


def number(doc: Document, element: ET.Element, attribute: str, default: float | None, context: str = "") -> float:
    """One number of ``element``'s ``attribute`` (see ``numbers``)."""
    return float(numbers(doc, element, attribute, 1, None if default is None else (default,), context)[0])


def rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (3, 3) for ``rpy`` = (roll, pitch, yaw)
    [rad] (URDF spec, <origin>: "rpy … fixed axis roll, pitch and yaw angles"; ROS REP 103).

    ``tumble.rotations.rpy_to_matrix`` follows ArtiSynth's naming, R = Rz(a0) Ry(a1) Rx(a2) with a0 called
    "roll": URDF's (roll, pitch, yaw) is its (yaw, pitch, roll)."""
    return rpy_to_matrix(np.asarray(rpy, dtype=float)[::-1])
