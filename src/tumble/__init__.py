"""tumble: 3D rigid-body dynamics for Python.

The public names below are the whole API (see API.md); everything else is internal. Quaternions are
(w, x, y, z) body → world, SI units, z up, angular part first in 6-vectors.
"""

from . import solvers
from .body import Body
from .forces.springs import AxialSpring, FrameSpring, MultiPointSpring
from .integration.guard import NonFiniteStep
from .integration.ode import ode
from .joints import BallJoint, FixedJoint, HingeJoint, Joint, SliderJoint
from .mass import MassProperties, mass_properties, spatial_inertia, spatial_inertia_inv
from .queries.distance import Distance
from .queries.ray import RayHits
from .robots.ik import IKResult
from .sensors import ContactForce, ForceTorque, Imu
from .shapes import Box, Capsule, ConvexHull, Cylinder, Ellipsoid, Sphere
from .user.scene import load_scene
from .user.trajectory import SimulationInterrupted, Trajectory
from .world import World

__version__ = "0.1.0"

__all__ = [
    "AxialSpring",
    "BallJoint",
    "Body",
    "Box",
    "Capsule",
    "ContactForce",
    "ConvexHull",
    "Cylinder",
    "Distance",
    "Ellipsoid",
    "FixedJoint",
    "ForceTorque",
    "FrameSpring",
    "IKResult",
    "HingeJoint",
    "Imu",
    "Joint",
    "MassProperties",
    "MultiPointSpring",
    "NonFiniteStep",
    "RayHits",
    "Sphere",
    "SimulationInterrupted",
    "SliderJoint",
    "Trajectory",
    "World",
    "load_scene",
    "mass_properties",
    "ode",
    "solvers",
    "spatial_inertia",
    "spatial_inertia_inv",
]
