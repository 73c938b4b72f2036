"""The contacts of N agents from one world-wide query, split per agent.

One ``getContactPoints()`` per world and physics step returns every contact point of the
world; each point names its two bodies and links. Every body of the world has a role (an
agent's robot, floor or target, or anything else) and an owner (its agent), so one pass of
numpy over all points gives each agent's floor contacts per body part and whether it touches
its target: exactly what one ``getContactPoints(bodyA=robot)`` per agent would give.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

import attrs
import numpy as np
import pybullet as p
from numpy.typing import NDArray

__all__ = ["ContactRoles", "contact_pairs", "split_contacts"]

OTHER, ROBOT, FLOOR, TARGET = 0, 1, 2, 3

#: (bodyA, bodyB, linkIndexA, linkIndexB) of one getContactPoints entry.
_PAIR = itemgetter(1, 2, 3, 4)


@attrs.frozen
class ContactRoles:
    """Role and owning agent of every body id in one world.

    Attributes:
        role: (max body id + 1,) ``ROBOT``, ``FLOOR``, ``TARGET`` or ``OTHER`` per body id.
        owner: (max body id + 1,) the agent each body belongs to, -1 for none.
        link_to_part: (num_links + 1,) body part of each robot link (index link + 1, so the
            base's -1 is 0), -1 for links that are no part.
        num_agents: N.
        num_parts: body parts per robot.
    """

    role: NDArray[np.intp]
    owner: NDArray[np.intp]
    link_to_part: NDArray[np.intp]
    num_agents: int
    num_parts: int

    @classmethod
    def build(
        cls,
        robots: Sequence[int],
        floors: Sequence[int],
        targets: Sequence[int],
        link_to_part: NDArray[np.intp],
        num_parts: int,
    ) -> ContactRoles:
        """Roles of agent k's ``robots[k]``, ``floors[k]`` and ``targets[k]``."""
        size = 1 + max(max(robots), max(floors), max(targets))
        role = np.full(size, OTHER, dtype=np.intp)
        owner = np.full(size, -1, dtype=np.intp)
        for kind, bodies in ((ROBOT, robots), (FLOOR, floors), (TARGET, targets)):
            role[list(bodies)] = kind
            owner[list(bodies)] = np.arange(len(bodies))
        for array in (role, owner):
            array.flags.writeable = False
        return cls(role, owner, link_to_part, len(robots), num_parts)


def contact_pairs(client: int) -> NDArray[np.intp]:
    """(M, 4) ``(bodyA, bodyB, linkA, linkB)`` of every contact point in the world, now."""
    points: Any = p.getContactPoints(physicsClientId=client)
    return np.fromiter(
        chain.from_iterable(map(_PAIR, points)), dtype=np.intp, count=4 * len(points)
    ).reshape(-1, 4)


def split_contacts(
    pairs: NDArray[np.intp], roles: ContactRoles
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Each agent's floor contacts per body part and its target touch, from all points.

    A point counts for agent k when one body is k's robot and the other k's floor (the part
    is the robot link's part; helper links are no part) or k's target. Self-contacts and
    contacts with walls or with other agents' bodies count for nothing.

    Args:
        pairs: (M, 4) ``(bodyA, bodyB, linkA, linkB)`` rows (:func:`contact_pairs`).
        roles: the world's body roles.

    Returns:
        ``(ground, touching_target)``: (N, num_parts) and (N,) booleans.
    """
    ground = np.zeros((roles.num_agents, roles.num_parts), dtype=bool)
    touching = np.zeros(roles.num_agents, dtype=bool)
    if not len(pairs):
        return ground, touching
    body_a, body_b, link_a, link_b = pairs.T
    role_a, role_b = roles.role[body_a], roles.role[body_b]
    owner_a, owner_b = roles.owner[body_a], roles.owner[body_b]
    robot_is_a = role_a == ROBOT
    has_robot = (robot_is_a | (role_b == ROBOT)) & (owner_a == owner_b)
    other = np.where(robot_is_a, role_b, role_a)
    agent = np.where(robot_is_a, owner_a, owner_b)
    on_floor = has_robot & (other == FLOOR)
    parts = roles.link_to_part[np.where(robot_is_a, link_a, link_b)[on_floor] + 1]
    is_part = parts >= 0
    ground[agent[on_floor][is_part], parts[is_part]] = True
    touching[agent[has_robot & (other == TARGET)]] = True
    return ground, touching
