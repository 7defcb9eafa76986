"""PPO on the vector env's own device, top to bottom (in the style of cleanrl and rsl_rl).

Everything stays a tensor on the env's device: the rollout storage is preallocated ``(T, B, ...)``
tensors, actions are sampled with the trainer's ``torch.Generator``, GAE and the minibatch
updates run on the stored tensors, and the host reads a few numbers once per rollout (episode
returns for logging). One iteration:

1. **Collect** ``n_steps`` steps of all ``B`` instances: normalise the observation (running
   statistics, optional), stack frames (optional), act, step the env. A truncated episode's last
   reward gets ``gamma * V(final observation)`` added, as SB3 does, so time limits are not
   mistaken for terminal states.
2. **Advantages** by GAE(γ, λ) (:func:`.advantages.gae`).
3. **Update** for ``n_epochs`` epochs of ``n_minibatches`` minibatches: the clipped surrogate,
   the (optionally clipped) value loss and an entropy bonus (:func:`.advantages.ppo_loss`),
   advantages normalised per minibatch, gradients clipped by norm, the learning rate annealed
   linearly to zero over the run.

A recurrent policy (a GRU; :mod:`.recurrent_ppo`) keeps its hidden state across steps, zeroed
where an episode starts; its minibatches are groups of whole instance sequences, replayed from
the hidden state the rollout started with. A2C (:mod:`.a2c`) is the one-epoch, one-minibatch,
unclipped case of the same update.

The same seed, device and settings give the same run on CPU bit for bit.
"""

from __future__ import annotations

import time
from typing import Any

import torch
from gymnasium.vector import VectorEnv

from gymforge.baselines.ondevice.advantages import gae, ppo_loss
from gymforge.baselines.ondevice.normalization import RunningObsNorm
from gymforge.baselines.ondevice.policy import ActorCritic, PolicySpec, policy_spec
from gymforge.baselines.ondevice.ppo_config import PPOConfig
from gymforge.baselines.ondevice.rollout_parts import EpisodeTally, FrameStack, Timings


class PPO:
    """PPO (and A2C, recurrent PPO) on a Gymnasium vector env with SAME_STEP autoreset.

    Args:
        env: the training vector env (a gymforge batched env with ``array_backend="torch"``:
            torch tensors on ``env.device``; another backend is refused).
        config: the hyperparameters.
        seed: seeds the network's initialisation, the sampling and the minibatch order; the env
            is reset with ``seed`` (instance ``i`` with ``seed + i``) by :meth:`start`.
        frame_stack: observations stacked per instance (1: none).
    """

    def __init__(
        self, env: VectorEnv, config: PPOConfig, seed: int = 0, frame_stack: int = 1
    ) -> None:
        backend = getattr(env, "array_backend", "torch")
        if backend != "torch":
            raise ValueError(
                f"the on-device trainer steps torch tensors, got an env of array_backend "
                f'{backend!r}: make it with gym.make_vec(..., array_backend="torch") or a device'
            )
        self.env = env
        self.config = config
        self.device = torch.device(getattr(env, "device", "cpu"))
        self.num_envs = int(env.num_envs)
        self.frame_stack = int(frame_stack)
        self.spec: PolicySpec = policy_spec(
            env.single_observation_space,
            env.single_action_space,
            self.frame_stack,
            config.hidden,
            config.shared,
            config.activation,
            config.rnn_hidden,
            config.ordinal,
            config.ordinal_width,
        )
        if config.final_temperature != 1.0 and self.spec.action_kind != "categorical":
            raise ValueError(
                f"final_temperature applies to categorical actions; {env.single_action_space} "
                "is not: set final_temperature: 1"
            )
        self._read_source = self._action_reads(env) if config.mask_unread_actions else None
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.policy = ActorCritic(self.spec).to(self.device)
        params = list(self.policy.parameters())
        fused = {"fused": True} if self.device.type in ("cpu", "cuda") else {}
        if config.optimizer == "adam":
            self.optimizer: torch.optim.Optimizer = torch.optim.Adam(
                params, lr=config.learning_rate, eps=config.adam_eps, **fused
            )
        else:
            self.optimizer = torch.optim.RMSprop(
                params, lr=config.learning_rate, alpha=0.99, eps=config.adam_eps
            )
        self.generator = torch.Generator(self.device)
        self.generator.manual_seed(seed)
        width = self.spec.obs_dim // self.frame_stack
        self.obs_norm = RunningObsNorm(width, self.device) if config.normalize_obs else None
        self.stack = FrameStack(self.frame_stack, width) if self.frame_stack > 1 else None
        self.timings = Timings()
        self.steps_done = 0
        self.updates_done = 0
        self.temperature = 1.0  # of categorical sampling, set per rollout by collect
        self.seed = seed
        steps, batch, width_in = config.n_steps, self.num_envs, self.spec.obs_dim
        dev = self.device
        act_dtype = torch.float32 if self.spec.action_kind == "gaussian" else torch.int64
        self.buf_obs = torch.zeros(steps, batch, width_in, device=dev)
        self.buf_actions = torch.zeros(
            steps, batch, self.spec.action_dim, dtype=act_dtype, device=dev
        )
        self.buf_log_prob = torch.zeros(steps, batch, device=dev)
        self.buf_values = torch.zeros(steps, batch, device=dev)
        self.buf_rewards = torch.zeros(steps, batch, device=dev)
        self.buf_dones = torch.zeros(steps, batch, dtype=torch.bool, device=dev)
        self.buf_starts = torch.zeros(steps, batch, dtype=torch.bool, device=dev)
        # with mask_unread_actions: which dimensions the env read, and each one's log-probability
        masked = (steps, batch, self.spec.action_dim) if self._read_source is not None else (0,)
        self.buf_read = torch.zeros(masked, dtype=torch.bool, device=dev)
        self.buf_dim_log_prob = torch.zeros(masked, device=dev)
        self._obs: torch.Tensor | None = None  # policy input of the next step (B, d)
        self._starts = torch.ones(batch, dtype=torch.bool, device=dev)
        self._state: torch.Tensor | None = None
        self._rollout_state: torch.Tensor | None = None  # recurrent state at rollout start
        self._ep_return = torch.zeros(batch, dtype=torch.float64, device=dev)
        self._ep_length = torch.zeros(batch, dtype=torch.int64, device=dev)
        self._finished: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        self._cut_at: torch.Tensor | None = None  # first-episode cut step per instance
        self._cut_steps_left = 0

    def _action_reads(self, env: VectorEnv) -> Any:
        """The env whose ``last_action_read`` says which action dimensions a step read."""
        source = getattr(env, "unwrapped", env)
        if self.spec.action_kind != "categorical" or not hasattr(source, "last_action_read"):
            raise ValueError(
                "mask_unread_actions needs categorical actions and an env that reports which "
                f"action dimensions it read (last_action_read); {type(source).__name__} with "
                f"{env.single_action_space} does not: set mask_unread_actions: false"
            )
        return source

    # --- observations --------------------------------------------------------------------------
    def _policy_input(self, raw: torch.Tensor, starts: torch.Tensor | None) -> torch.Tensor:
        obs = raw.reshape(raw.shape[0], -1).to(torch.float32)
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        if self.stack is None:
            return obs
        return self.stack.reset(obs) if starts is None else self.stack.push(obs, starts)

    def start(self, seed: int | None = None) -> None:
        """Reset the env (instance ``i`` with ``seed + i``; default the run's seed)."""
        raw, _ = self.env.reset(seed=self.seed if seed is None else seed)
        raw = torch.as_tensor(raw, device=self.device)
        if self.obs_norm is not None:
            self.obs_norm.update(raw.reshape(self.num_envs, -1))
        self._obs = self._policy_input(raw, None)
        self._starts = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self._state = self.policy.initial_state(self.num_envs, self.device)
        self._ep_return.zero_()
        self._ep_length.zero_()
        max_steps = getattr(self.env, "max_steps", None)
        if (
            self.config.stagger_starts
            and isinstance(max_steps, int)
            and max_steps > 1
            and getattr(self.env, "supports_reset_mask", False)
        ):
            u = torch.rand(self.num_envs, generator=self.generator, device=self.device)
            self._cut_at = 1 + (u * (max_steps - 1)).long()
            self._cut_steps_left = max_steps

    # --- collection ----------------------------------------------------------------------------
    def _features(
        self, obs: torch.Tensor, state: torch.Tensor | None, starts: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.policy.memory is None:
            return obs, state
        feats, state = self.policy.remember(
            obs[None], state, None if starts is None else starts[None]
        )
        return feats[0], state

    def _tempered(self, out: torch.Tensor) -> torch.Tensor:
        """Categorical logits divided by the sampling temperature of this rollout."""
        return out if self.temperature == 1.0 else out / self.temperature

    @torch.no_grad()
    def collect(self, progress: float = 0.0) -> None:
        """Fill the rollout storage with ``n_steps`` steps of every instance; ``progress`` (the
        share of the run done before this rollout) sets the sampling temperature."""
        if self._obs is None:
            self.start()
        assert self._obs is not None
        cfg = self.config
        if self.policy.categorical is not None:
            self.temperature = 1.0 + (cfg.final_temperature - 1.0) * progress
        self._rollout_state = None if self._state is None else self._state.clone()
        for t in range(cfg.n_steps):
            t0 = time.perf_counter()
            feats, self._state = self._features(self._obs, self._state, self._starts)
            out, value = self.policy.heads(feats)
            action, log_prob = self.policy.sample(self._tempered(out), self.generator)
            self.buf_obs[t] = self._obs
            self.buf_actions[t] = action
            self.buf_log_prob[t] = log_prob
            self.buf_values[t] = value
            self.buf_starts[t] = self._starts
            if self._read_source is not None:
                assert self.policy.categorical is not None
                dims, _ = self.policy.categorical.dim_log_prob_entropy(self._tempered(out), action)
                self.buf_dim_log_prob[t] = dims
            env_action = self.policy.env_action(action)
            t1 = time.perf_counter()
            raw, reward, terminated, truncated, infos = self.env.step(env_action)
            t2 = time.perf_counter()
            if self._read_source is not None:
                self.buf_read[t] = self._read_source.last_action_read
            raw = torch.as_tensor(raw, device=self.device)
            reward = torch.as_tensor(reward, device=self.device).to(torch.float32)
            terminated = torch.as_tensor(terminated, device=self.device)
            truncated = torch.as_tensor(truncated, device=self.device)
            done = terminated | truncated
            self._ep_return += reward
            self._ep_length += 1
            if "final_obs" in infos:  # somebody finished: bootstrap the truncated ones
                final = torch.as_tensor(infos["final_obs"], device=self.device)
                final = final.reshape(self.num_envs, -1).to(torch.float32)
                if self.obs_norm is not None:
                    final = self.obs_norm(final)
                if self.stack is not None:
                    final = self.stack.peek(final)
                feats, _ = self._features(final, self._state, None)
                _, final_value = self.policy.heads(feats)
                cut = truncated & ~terminated
                reward = reward + cfg.gamma * final_value * cut.to(reward.dtype)
                self._finished.append(
                    (done.clone(), self._ep_return.clone(), self._ep_length.clone())
                )
                self._ep_return.masked_fill_(done, 0.0)
                self._ep_length.masked_fill_(done, 0)
            if self._cut_at is not None:
                raw, reward, done = self._cut_first_episodes(raw, reward, done)
            self.buf_rewards[t] = reward
            self.buf_dones[t] = done
            if self.obs_norm is not None:
                self.obs_norm.update(raw.reshape(self.num_envs, -1))
            self._obs = self._policy_input(raw, done)
            self._starts = done
            t3 = time.perf_counter()
            self.timings.env += t2 - t1
            self.timings.policy += (t1 - t0) + (t3 - t2)
        self.steps_done += cfg.n_steps * self.num_envs

    def _cut_first_episodes(
        self, raw: torch.Tensor, reward: torch.Tensor, done: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """End the instances whose first episode reaches its cut step (see ``stagger_starts``):
        bootstrap their value like a time limit and reset them; nothing is counted."""
        assert self._cut_at is not None
        self._cut_steps_left -= 1
        self._cut_at.masked_fill_(done, -1)  # ended on its own: never cut
        cut = self._ep_length == self._cut_at
        if self._cut_steps_left <= 0:
            self._cut_at = None
        if not bool(cut.any()):
            return raw, reward, done
        obs = raw.reshape(self.num_envs, -1).to(torch.float32)
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        if self.stack is not None:
            obs = self.stack.peek(obs)
        feats, _ = self._features(obs, self._state, None)
        _, value = self.policy.heads(feats)
        reward = reward + self.config.gamma * value * cut.to(reward.dtype)
        self._ep_return.masked_fill_(cut, 0.0)
        self._ep_length.masked_fill_(cut, 0)
        if self._cut_at is not None:
            self._cut_at.masked_fill_(cut, -1)
        raw, _ = self.env.reset(options={"reset_mask": cut})
        return torch.as_tensor(raw, device=self.device), reward, done | cut

    def drain_episodes(self) -> EpisodeTally:
        """The episodes finished since the last call (one host read per call)."""
        tally = EpisodeTally()
        for done, returns, lengths in self._finished:
            mask = done.cpu()
            tally.returns += returns.cpu()[mask].tolist()
            tally.lengths += lengths.cpu()[mask].tolist()
        self._finished = []
        return tally

    # --- update ------------------------------------------------------------------------------
    def update(self, progress: float = 0.0) -> dict[str, float]:
        """Advantages and ``n_epochs`` of minibatch updates; ``progress`` in [0, 1), the share of
        the run done before this rollout, anneals the learning rate (the first update takes the
        full rate, the last ``lr / updates``). Returns the mean loss parts of the last epoch."""
        cfg = self.config
        t0 = time.perf_counter()
        if cfg.anneal_lr:
            lr = cfg.learning_rate * max(0.0, 1.0 - progress)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
        with torch.no_grad():
            feats, _ = self._features(self._obs, self._state, self._starts)
            _, last_value = self.policy.heads(feats)
            advantages, returns = gae(
                self.buf_rewards,
                self.buf_values,
                self.buf_dones,
                last_value,
                cfg.gamma,
                cfg.gae_lambda,
            )
        if self.policy.memory is None:
            parts = self._update_flat(advantages, returns)
        else:
            parts = self._update_sequences(advantages, returns)
        self.updates_done += 1
        stats = {k: float(v) for k, v in parts.items()}
        self.timings.update += time.perf_counter() - t0
        return stats

    def _step(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(
                self.policy.parameters(), self.config.max_grad_norm, foreach=True
            )
        self.optimizer.step()

    def _loss(
        self,
        out: torch.Tensor,
        values: torch.Tensor,
        idx: Any,
        advantages: torch.Tensor,
        returns: torch.Tensor,
        actions: torch.Tensor,
        old_log_prob: torch.Tensor,
        old_values: torch.Tensor,
        read: torch.Tensor,
        old_dim_log_prob: torch.Tensor,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        cfg = self.config
        adv = advantages[idx]
        weights = None
        if self._read_source is None:
            new_log_prob, entropy = self.policy.log_prob_entropy(out, actions[idx])
            old = old_log_prob[idx]
        else:  # only the dimensions the env read, only the samples with one
            assert self.policy.categorical is not None
            counted = read[idx].to(out.dtype)
            dims, dim_entropy = self.policy.categorical.dim_log_prob_entropy(out, actions[idx])
            new_log_prob = (dims * counted).sum(-1)
            old = (old_dim_log_prob[idx] * counted).sum(-1)
            entropy = dim_entropy.sum(-1)
            weights = (counted.sum(-1) > 0).to(out.dtype)
        if cfg.normalize_advantage:
            adv = _normalized(adv, weights)
        return ppo_loss(
            new_log_prob,
            old,
            adv,
            values,
            old_values[idx],
            returns[idx],
            entropy,
            cfg.clip,
            cfg.clip_value,
            cfg.value_coef,
            cfg.entropy_coef,
            weights,
        )

    def _update_flat(
        self, advantages: torch.Tensor, returns: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        cfg = self.config
        n = cfg.n_steps * self.num_envs
        obs = self.buf_obs.reshape(n, -1)
        actions = self.buf_actions.reshape(n, -1)
        flat = (
            advantages.reshape(n),
            returns.reshape(n),
            actions,
            self.buf_log_prob.reshape(n),
            self.buf_values.reshape(n),
            self.buf_read.reshape(n, -1),  # (n, 0) without mask_unread_actions
            self.buf_dim_log_prob.reshape(n, -1),
        )
        size = max(1, n // cfg.n_minibatches)
        totals: dict[str, torch.Tensor] = {}
        for epoch in range(cfg.n_epochs):
            order = torch.randperm(n, generator=self.generator, device=self.device)
            for start in range(0, size * cfg.n_minibatches, size):
                idx = order[start : start + size]
                out, values = self.policy.heads(obs[idx])
                loss, parts = self._loss(self._tempered(out), values, idx, *flat)
                self._step(loss)
                if epoch == cfg.n_epochs - 1:
                    for key, value in parts.items():
                        totals[key] = totals.get(key, 0.0) + value / cfg.n_minibatches
        return totals

    def _update_sequences(
        self, advantages: torch.Tensor, returns: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        cfg = self.config
        groups = min(cfg.n_minibatches, self.num_envs)
        size = self.num_envs // groups
        totals: dict[str, torch.Tensor] = {}
        for epoch in range(cfg.n_epochs):
            order = torch.randperm(self.num_envs, generator=self.generator, device=self.device)
            for start in range(0, size * groups, size):
                cols = order[start : start + size]
                state = self._rollout_state[:, cols]
                feats, _ = self.policy.remember(
                    self.buf_obs[:, cols], state, self.buf_starts[:, cols]
                )
                out, values = self.policy.heads(feats)
                idx = (slice(None), cols)
                loss, parts = self._loss(
                    self._tempered(out),
                    values,
                    idx,
                    advantages,
                    returns,
                    self.buf_actions,
                    self.buf_log_prob,
                    self.buf_values,
                    self.buf_read,
                    self.buf_dim_log_prob,
                )
                self._step(loss)
                if epoch == cfg.n_epochs - 1:
                    for key, value in parts.items():
                        totals[key] = totals.get(key, 0.0) + value / groups
        return totals

    # --- state for checkpoints -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs (the env is reset afresh on resume)."""
        return {
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "obs_norm": self.obs_norm.state_dict() if self.obs_norm is not None else None,
            "steps_done": self.steps_done,
            "updates_done": self.updates_done,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        if self.obs_norm is not None and state.get("obs_norm") is not None:
            self.obs_norm.load_state_dict(state["obs_norm"])
        self.steps_done = int(state["steps_done"])
        self.updates_done = int(state["updates_done"])


def _normalized(adv: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    """Advantages to zero mean and unit std over the counted samples (all, or ``weights`` 1);
    unchanged with fewer than two (no host sync: the choice is a ``torch.where``)."""
    if weights is None:
        return (adv - adv.mean()) / (adv.std() + 1e-8) if adv.numel() > 1 else adv
    count = weights.sum()
    mean = (adv * weights).sum() / count.clamp(min=1.0)
    var = ((adv - mean) ** 2 * weights).sum() / (count - 1.0).clamp(min=1.0)
    return torch.where(count >= 2, (adv - mean) / (var.sqrt() + 1e-8), adv)
