"""One world-wide contact query sorted per agent against one per-body query per agent."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pybullet as p

import envs  # noqa: F401  (registers the ids)
from envs.contacts import ContactSorter, part_flags


def _per_body(client: int, agent) -> tuple[set[int], bool]:
    """The agent's robot links on its floor and its target touch, by per-body queries."""
    floor = p.getContactPoints(bodyA=agent.robot, bodyB=agent.floor, physicsClientId=client)
    target = p.getContactPoints(bodyA=agent.robot, bodyB=agent.target, physicsClientId=client)
    return {point[3] for point in floor}, bool(target)


def test_world_query_sorted_per_agent_equals_per_body_queries():
    env = gym.make_vec("Walker-v0", num_envs=4, vectorization_mode="vector_entry_point")
    unwrapped = env.unwrapped
    client, agents = unwrapped.client, unwrapped.agents
    sorter = ContactSorter(
        [a.robot for a in agents], [a.floor for a in agents], [a.target for a in agents]
    )
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    touched = floor_seen = 0
    for step in range(60):
        env.step(rng.uniform(-1.0, 1.0, env.action_space.shape))
        if step % 10 == 5:  # put targets 0 and 2 into their walkers: target touches happen
            for agent in agents[::2]:
                position = p.getBasePositionAndOrientation(agent.robot, physicsClientId=client)[0]
                p.resetBasePositionAndOrientation(
                    agent.target, position, (0, 0, 0, 1), physicsClientId=client
                )
        p.stepSimulation(physicsClientId=client)  # a fresh contact state, read both ways
        sorted_contacts = sorter.read(client)
        for k, agent in enumerate(agents):
            links, touching = _per_body(client, agent)
            assert sorted_contacts.floor_links[k] == links
            assert (k in sorted_contacts.touching_target) == touching
            touched += touching
            floor_seen += bool(links)
    assert touched > 0 and floor_seen > 0  # both kinds of contact were compared
    env.close()


def test_part_flags_map_links_to_parts_and_drop_helper_links():
    link_to_part = np.array([0, -1, 1, -1, 2])  # base -> part 0, link 1 -> 1, link 3 -> 2
    flags = part_flags([{-1, 3}, set(), {0, 2}], link_to_part, 3)
    np.testing.assert_array_equal(
        flags, [[True, False, True], [False, False, False], [False, False, False]]
    )
    flags = part_flags([{1}], link_to_part, 3)
    np.testing.assert_array_equal(flags, [[False, True, False]])
