//! The operations in families: each file holds both halves of its operations, what the
//! handle sends (checked and resolved by name on the caller's thread) and what the physics
//! thread does with it between two steps (`operations::carry_out` dispatches).
mod bodies;
mod control;
mod keyframes;
mod pacing;
mod presets;
mod recording;
mod snapshots;
