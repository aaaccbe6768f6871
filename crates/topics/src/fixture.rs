//! A small real world for the outputs' unit tests: a floating base with an IMU site, an arm
//! on a hinge with a force-torque site, a fan of three rangefinders and one looking down,
//! over a floor and before a wall 2 m ahead; planned from its config and stepped by MuJoCo.
use super::{Plan, PlanError, PublishCounters, Tick};
use crate::config::Config;
use crate::model::{World, build_world};
use crate::sim::{SimStats, StateExchange, StateLayout, StateSnapshot};
use mujoco_rs::prelude::*;
use std::path::Path;
use std::sync::Arc;

pub const ROBOT: &str = r#"
      <mujoco><worldbody>
        <body name="base" pos="0 0 1">
          <freejoint name="root"/>
          <geom type="box" size="0.2 0.1 0.05" mass="2"/>
          <site name="imu_site" pos="0.1 0 0" quat="0.9238795 0 0 0.3826834"/>
          <site name="down" pos="0 0 -0.06" zaxis="0 0 -1"/>
          <body name="arm" pos="0 0 0.1">
            <joint name="hinge" type="hinge" axis="0 1 0"/>
            <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
            <site name="ft_site"/>
          </body>
          <body name="lidar" pos="0 0 0.2">
            <geom type="cylinder" size="0.03 0.02" mass="0.1"/>
            <site name="ray_0" pos="0.05 0 0" zaxis="0 -1 0"/>
            <site name="ray_1" pos="0.05 0 0" zaxis="1 0 0"/>
            <site name="ray_2" pos="0.05 0 0" zaxis="0 1 0"/>
          </body>
        </body>
        <body name="wall" pos="2 0 1.2"><geom type="box" size="0.1 1 1"/></body>
      </worldbody>
      <sensor>
        <framequat name="imu_quat" objtype="site" objname="imu_site"/>
        <gyro name="imu_gyro" site="imu_site"/>
        <accelerometer name="imu_acc" site="imu_site"/>
        <force name="ft_force" site="ft_site"/>
        <torque name="ft_torque" site="ft_site"/>
        <rangefinder name="ray_0" site="ray_0" cutoff="5"/>
        <rangefinder name="ray_1" site="ray_1" cutoff="5"/>
        <rangefinder name="ray_2" site="ray_2" cutoff="5"/>
        <rangefinder name="down" site="down" cutoff="5"/>
      </sensor></mujoco>
"#;

pub struct Fixture {
    pub world: World,
    pub config: Config,
    data: MjData<Arc<MjModel>>,
    exchange: StateExchange,
    pub counters: std::sync::Arc<PublishCounters>,
    pub stats: SimStats,
}

impl Fixture {
    /// The robot above as `bot`, with `ros` (YAML, indented for the robot) as its `ros:`.
    pub fn new(ros: &str) -> Self {
        let mjcf: String = ROBOT.lines().map(|l| format!("    {l}\n")).collect();
        let yaml = format!(
            "world: {{floor: true}}\nrobots:\n  - name: bot\n    mjcf_string: |\n{mjcf}{ros}"
        );
        let config = Config::from_yaml(&yaml, "test.yaml", Path::new("."), &[]).unwrap();
        let world = build_world(&config).unwrap();
        let data = MjData::try_new(world.model.clone()).unwrap();
        let exchange = StateExchange::new(StateLayout::of(&world.model));
        let stats = SimStats {
            steps: 0,
            sim_time: 0.0,
            real_time_factor: 1.0,
            mean_step_time: 0.0,
            max_step_time: 0.0,
            run_mean_step_time: 0.0,
            busy_time: 0.0,
            mujoco_time: 0.0,
            instabilities: 0,
            overruns: 0,
            lag_resets: 0,
            time_let_go: 0.0,
            rejected_commands: 0,
            dropped_commands: 0,
            ignored_commands: 0,
            late_commands: 0,
            refused_operations: 0,
            stale_commands: 0,
            world_changes: 0,
            last_change_time: 0.0,
            page_faults: 0,
        };
        Self {
            world,
            config,
            data,
            exchange,
            counters: Default::default(),
            stats,
        }
    }

    pub fn plan(&self) -> Result<Plan<'_>, PlanError> {
        Plan::new(
            &self.world.model,
            &self.world.robots,
            &self.world.sensors,
            &self.config,
            &self.world.broadcaster_gates,
            0,
        )
    }

    /// The state after `steps` more steps (0: as computed at the start).
    pub fn state(&mut self, steps: u64) -> StateSnapshot {
        self.data.forward();
        for _ in 0..steps {
            self.data.step();
        }
        let mut state = StateSnapshot::with_layout(self.exchange.layout());
        self.exchange.publish(&self.data, steps);
        assert!(self.exchange.read_latest(&mut state));
        state
    }

    /// The message `topic` fills after `steps` steps (a fresh plan), as JSON, and the state
    /// it was filled from.
    pub fn message(&mut self, steps: u64, topic: &str) -> (serde_json::Value, StateSnapshot) {
        let state = self.state(steps);
        let mut plan = self.plan().unwrap();
        let stamp = crate::convert::time(state.time);
        let tick = self.tick(&state, &stamp, std::time::Instant::now());
        let message = fill(&mut plan, topic, &tick).unwrap_or_else(|| panic!("no {topic}"));
        (message, state)
    }

    pub fn tick<'a>(
        &'a self,
        state: &'a StateSnapshot,
        stamp: &'a crate::messages::builtin_interfaces::msg::Time,
        now: std::time::Instant,
    ) -> Tick<'a> {
        Tick {
            state,
            stamp,
            now,
            stats: &self.stats,
            publishing: &self.counters,
            cameras: None,
            lidars: None,
            offload: None,
        }
    }
}

/// The message `topic` of `plan` fills for `tick`, as JSON.
pub fn fill(plan: &mut Plan, topic: &str, tick: &Tick) -> Option<serde_json::Value> {
    let output = plan
        .outputs
        .iter_mut()
        .find(|o| o.topic().name == topic)
        .unwrap_or_else(|| panic!("no output '{topic}'"));
    output.fill_json(tick)
}

/// The topics planned, in order.
pub fn topics(plan: &Plan) -> Vec<String> {
    plan.outputs().map(|o| o.topic().name.clone()).collect()
}

/// A number of a JSON message.
pub fn number(value: &serde_json::Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}
