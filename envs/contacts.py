"""The contacts of N agents from one world-wide query, split per agent by body id.

One ``getContactPoints()`` per world and physics step returns every contact point of the
world; each point names its two bodies and links. The pairs of bodies that matter are known
when the world is built (agent k's robot with its own floor, and with its own target), so one
dictionary look-up per point sorts the world's points into each agent's floor contacts (by
robot link) and target touches: exactly what one ``getContactPoints(bodyA=robot)`` per agent
would give. Contacts with walls, self-contacts and anything else are skipped by the same
look-up. Plain Python here: a step has a few points per agent, fewer than numpy's per-call
overhead is worth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import pybullet as p
from numpy.typing import NDArray

__all__ = ["AgentContacts", "ContactSorter"]

_ROBOT_IS_A, _ROBOT_IS_B, _TARGET = 0, 1, 2


@attrs.frozen
class AgentContacts:
    """What one physics step's contact points mean for the agents.

    Attributes:
        floor_links: per agent (index into the sorter's agents), the set of its robot's
            link indices (-1 for the base) touching its own floor.
        touching_target: agents with a robot part touching their own target.
    """

    floor_links: list[set[int]]
    touching_target: set[int]


class ContactSorter:
    """Sorts a world's contact points per agent: floor contacts by link, target touches.

    Args:
        robots: agent k's robot body id, per agent.
        floors: agent k's floor body id.
        targets: agent k's target body id.
    """

    def __init__(self, robots: Sequence[int], floors: Sequence[int], targets: Sequence[int]):
        kinds: dict[tuple[int, int], tuple[int, int]] = {}
        for agent, (robot, floor, target) in enumerate(zip(robots, floors, targets, strict=True)):
            kinds[(robot, floor)] = (agent, _ROBOT_IS_A)
            kinds[(floor, robot)] = (agent, _ROBOT_IS_B)
            kinds[(robot, target)] = (agent, _TARGET)
            kinds[(target, robot)] = (agent, _TARGET)
        self._kinds = kinds
        self._count = len(robots)

    def sort(self, points: Sequence[Any]) -> AgentContacts:
        """Sorts ``getContactPoints()`` entries (bodyA, bodyB, linkA, linkB at 1..4)."""
        floor_links: list[set[int]] = [set() for _ in range(self._count)]
        touching: set[int] = set()
        kinds = self._kinds
        for point in points:
            kind = kinds.get((point[1], point[2]))
            if kind is None:
                continue
            agent, side = kind
            if side == _TARGET:
                touching.add(agent)
            else:
                floor_links[agent].add(point[3] if side == _ROBOT_IS_A else point[4])
        return AgentContacts(floor_links, touching)

    def read(self, client: int) -> AgentContacts:
        """Sorts the world's contact points now (one ``getContactPoints()``)."""
        return self.sort(p.getContactPoints(physicsClientId=client))


def part_flags(
    floor_links: Sequence[set[int]], link_to_part: NDArray[np.intp], num_parts: int
) -> NDArray[np.bool_]:
    """(L, num_parts) flags of the parts whose links touch the floor, one row per link set.

    Args:
        floor_links: per agent, robot link indices (-1: base) touching its floor.
        link_to_part: (num_links + 1,) part of each link at index link + 1, -1 for none.
        num_parts: body parts per robot.
    """
    flags = np.zeros((len(floor_links), num_parts + 1), dtype=bool)
    cells = [(row, link + 1) for row, links in enumerate(floor_links) for link in links]
    if cells:
        rows, links = np.array(cells).T
        flags[rows, link_to_part[links]] = True  # helper links (-1) land in the last column
    return flags[:, :num_parts]
