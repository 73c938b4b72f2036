"""physbody: Unity ML-Agents' physics-body sensors on PyBullet.

The sensor library knows nothing of any task: a ``PoseExtractor`` reads the world states of a
body tree, ``PhysicsSensorSettings`` picks the quantities, and a ``PhysicsBodySensor`` writes
them into a float32 observation. Importing this package imports numpy, attrs, gymnasium and
pybullet only, never a training library.
"""

from physbody.bullet import (
    ArticulationBatchPoseExtractor,
    ArticulationPoseExtractor,
    RigidBodyPoseExtractor,
)
from physbody.pose_extractor import BodyStates, PoseExtractor
from physbody.sensor import PhysicsBodySensor
from physbody.settings import PhysicsSensorSettings

__all__ = [
    "ArticulationBatchPoseExtractor",
    "ArticulationPoseExtractor",
    "BodyStates",
    "PhysicsBodySensor",
    "PhysicsSensorSettings",
    "PoseExtractor",
    "RigidBodyPoseExtractor",
]

__version__ = "0.1.0"
