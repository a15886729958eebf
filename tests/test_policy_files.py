"""Model files (agents/policies/model_file.py, agents/policies/policy.py,
agents/policies/convert.py): a ``.safetensors``
with the sidecar inside, rebuilt as a NumPy actor from the sidecar alone; the shipped pretrained
agents pinned to their files and moves; atomic writes; the explicit opt-in converter for one's
own ``.zip``."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from agents.bots.base import make_agent
from agents.policies.model_file import load_tensors, network_tensors, read_sidecar, write_policy
from agents.policies.policy import PRETRAINED, load_policy_agent, pretrained_path
from trash_env.observation import OBS_VERSION, observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv


def tiny_network(
    players: int = 2, hidden: tuple[int, ...] = (8, 6), activation: str = "tanh"
) -> dict:
    return {
        "kind": "mlp",
        "inputs": observation_size(players),
        "hidden": list(hidden),
        "value_hidden": list(hidden),
        "activation": activation,
        "actions": 13,
    }


def tiny_tensors(network: dict, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        name: rng.normal(size=shape).astype(np.float32)
        for name, shape in network_tensors(network).items()
    }


def tiny_info(players: int = 2) -> dict:
    return {
        "num_players": players,
        "rules": Rules(num_players=players).to_dict(),
        "algorithm": "MaskablePPO",
        "timesteps": 0,
        "seed": 0,
    }


def write_tiny(path, players: int = 2, activation: str = "tanh", seed: int = 0):
    network = tiny_network(players, activation=activation)
    tensors = tiny_tensors(network, seed)
    write_policy(path, tensors, network, tiny_info(players))
    return tensors


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_the_actor_is_rebuilt_from_the_sidecar_and_computes_the_network(tmp_path, activation):
    path = tmp_path / "m.safetensors"
    tensors = write_tiny(path, activation=activation)
    agent = load_policy_agent(str(path))
    act = np.tanh if activation == "tanh" else (lambda x: np.maximum(x, 0))
    env = TrashSoloEnv()
    obs, _ = env.reset(seed=1)
    x = obs.astype(np.float32)
    for i in (0, 2):
        x = act(
            x @ tensors[f"mlp_extractor.policy_net.{i}.weight"].T
            + tensors[f"mlp_extractor.policy_net.{i}.bias"]
        )
    expected = x @ tensors["action_net.weight"].T + tensors["action_net.bias"]
    assert np.allclose(agent.logits(obs), expected, atol=1e-5)
    mask = env.action_masks()
    assert agent.act(obs, mask, None) == int(np.argmax(np.where(mask, expected, -np.inf)))


def test_the_sidecar_travels_inside_the_weights_and_as_a_readable_copy(tmp_path):
    path = tmp_path / "m.safetensors"
    write_tiny(path)
    inside = read_sidecar(path)
    beside = json.loads(path.with_suffix(".json").read_text())
    assert inside == beside
    assert inside["obs_version"] == OBS_VERSION and inside["observation_size"] == 153
    # Loading reads the copy inside: an edited or missing .json changes nothing.
    path.with_suffix(".json").write_text("{ not even json")
    assert load_policy_agent(str(path)).num_players == 2
    path.with_suffix(".json").unlink()
    assert load_policy_agent(str(path)).num_players == 2


def test_loading_needs_neither_torch_nor_stable_baselines3(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "m.safetensors"
    write_tiny(path)
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, *args):\n"
        "        if name.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from agents.bots.base import make_agent\n"
        f"agent = make_agent({str(path)!r})\n"
        "make_agent('pretrained')\n"
        "print('loaded', agent.num_players)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "loaded 2" in result.stdout


# What each shipped model played when it was shipped: (players, episodes per kind) -> learner
# decisions and the SHA-256 of its argmax actions in solo episodes against greedy and random
# (seeds 0 to episodes - 1, one-deal and whole games), and the SHA-256 of the model file. A
# changed file or a changed NumPy forward pass fails here.
PRETRAINED_PINS = {
    2: (
        60,
        6545,
        "5e49c07f0fd22a303b08f9a7afd9e7bf58db76854162aead059f146eb5af4711",
        "99ae95d28555a891c8d863ba670d2f807b88e88bec67c88179dcc9724613aff0",
    ),
    3: (
        10,
        1134,
        "91a976d2cb92f2a09c7f0eaadfd4f45257dab907dd2c267bcbcdf20fdd268ce6",
        "9f46fbe0c6e3d3c6c72072fa71729908dd4d2a06c677d24d6b7b84864c4bf7cc",
    ),
    4: (
        10,
        1271,
        "109c8989d5ba71ff784d3417879afe2cd0758c5519d2f8c68ad554bab3e8cac1",
        "72b2595f3c94e09dab7eb0b4edb284e032e370c2dfd999bab93749d813222ac3",
    ),
}


@pytest.mark.parametrize("players", sorted(PRETRAINED_PINS))
def test_the_shipped_pretrained_agents_make_their_pinned_moves(players):
    episodes, decisions, moves, file_hash = PRETRAINED_PINS[players]
    path = pretrained_path(players)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == file_hash
    agent = make_agent(f"pretrained_{players}p")
    actions = []
    for episode in ("round", "game"):
        env = TrashSoloEnv(opponents=["greedy", "random"], episode=episode, num_players=players)
        for seed in range(episodes):
            obs, _ = env.reset(seed=seed)
            done = False
            while not done:
                action = agent.act(obs, env.action_masks(), None)
                actions.append(action)
                obs, _, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
    assert (len(actions), hashlib.sha256(bytes(actions)).hexdigest()) == (decisions, moves)


def test_the_package_ships_no_pickled_model():
    models = sorted(p.name for p in PRETRAINED.parent.iterdir())
    assert models == [
        f"pretrained_{n}p.{ext}" for n in (2, 3, 4) for ext in ("json", "safetensors")
    ]
    for n in (2, 3, 4):
        tensors, sidecar = load_tensors(pretrained_path(n))
        assert sidecar["network"]["hidden"] == [128, 128] and len(tensors) == 12
        assert sidecar["num_players"] == n


def test_a_failed_write_leaves_the_previous_model_whole(tmp_path, monkeypatch):
    path = tmp_path / "m.safetensors"
    write_tiny(path, seed=0)
    before = path.read_bytes(), path.with_suffix(".json").read_bytes()

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_tiny(path, seed=1)
    assert (path.read_bytes(), path.with_suffix(".json").read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.safetensors"]


def test_written_files_get_ordinary_permissions(tmp_path):
    path = tmp_path / "m.safetensors"
    write_tiny(path)
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_converting_a_zip_is_an_explicit_opt_in(tmp_path, capsys):
    from agents.policies import convert

    assert convert.main([str(tmp_path / "x.zip"), str(tmp_path / "x.safetensors")]) == 2
    assert "--trust-pickle" in capsys.readouterr().err
    with pytest.raises(ValueError, match="trust_pickle=True"):
        convert.convert_sb3_zip(tmp_path / "x.zip", tmp_path / "y.safetensors", trust_pickle=False)


@pytest.mark.parametrize("content", [b"not a zip", b"PK\x03\x04" + b"\0" * 40, b""])
def test_converting_bad_zip_bytes_says_so_in_one_sentence_naming_the_file(
    tmp_path, capsys, content
):
    from agents.policies import convert

    old = tmp_path / "mine.zip"
    old.write_bytes(content)
    old.with_suffix(".json").write_text(json.dumps(tiny_info()))
    assert convert.main([str(old), str(tmp_path / "out.safetensors"), "--trust-pickle"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"{old} is not a readable MaskablePPO model .zip (" in err
    assert "BytesIO" not in err and "Traceback" not in err
    assert not (tmp_path / "out.safetensors").exists()


def test_an_sb3_model_converts_to_the_same_policy(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    from agents.policies import convert

    env = TrashSoloEnv()
    model = MaskablePPO(
        "MlpPolicy", env, policy_kwargs={"net_arch": [16]}, seed=0, device="cpu", n_steps=64
    )
    old = tmp_path / "own.zip"
    model.save(old)
    old.with_suffix(".json").write_text(json.dumps(tiny_info()))
    out = convert.convert_sb3_zip(old, tmp_path / "own.safetensors", trust_pickle=True)
    agent = load_policy_agent(str(out))
    obs, _ = env.reset(seed=0)
    with torch.no_grad():
        expected = (
            model.policy.get_distribution(torch.as_tensor(obs[None])).distribution.logits[0].numpy()
        )
    logits = agent.logits(obs)
    assert np.allclose(logits - logits.max(), expected - expected.max(), atol=1e-5)
