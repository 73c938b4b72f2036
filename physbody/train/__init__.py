"""Training on the physbody environments, ML-Agents style (the ``train`` extra).

``physbody train`` (:func:`physbody.train.trainer.train`) trains Stable-Baselines3 PPO or SAC
from an ML-Agents layout config (:mod:`physbody.train.settings`), keeps checkpoints and
``training_status.json`` as ML-Agents does (:mod:`physbody.train.checkpoints`), and exports
each checkpoint to ONNX (:mod:`physbody.train.export`). ``physbody play``
(:mod:`physbody.train.play`) runs an exported policy with onnxruntime; ``physbody plot``
(:mod:`physbody.train.plot`) draws the learning curve.

Importing this package imports nothing heavy: each submodule imports what it needs (torch and
Stable-Baselines3 only in ``trainer``, ``callbacks`` and ``export``), so ``physbody play`` needs
onnxruntime but not torch.
"""
