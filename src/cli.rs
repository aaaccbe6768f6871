//! Command line: which model to load, config overrides, how to run. Arguments after
//! `--ros-args` belong to ROS and are set aside before parsing.
use clap::Parser;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "mujoco_bridge",
    version,
    about = "MuJoCo physics on a real-time thread, bridged to ROS 2 and legacy ZMQ clients",
    after_help = "Without --config, --mjcf or --urdf the embedded default robot (a mobile \
                  manipulator) is loaded.\nArguments after --ros-args are passed to ROS 2."
)]
pub struct Cli {
    /// Robot/world config (YAML), e.g. config/panda.yaml.
    #[arg(short, long, value_name = "FILE", conflicts_with_all = ["mjcf", "urdf"])]
    pub config: Option<PathBuf>,
    /// Load one robot from an MJCF file instead of a config.
    #[arg(long, value_name = "FILE", conflicts_with = "urdf")]
    pub mjcf: Option<PathBuf>,
    /// Load one robot from a URDF (or .xacro) file instead of a config.
    #[arg(long, value_name = "FILE")]
    pub urdf: Option<PathBuf>,
    /// Refuse a URDF that needs repairs (each repair is otherwise a warning).
    #[arg(long)]
    pub strict: bool,
    /// Argument of a .xacro model, NAME:=VALUE (repeatable), as `xacro_args` in a config.
    #[arg(long = "xacro-arg", value_name = "NAME:=VALUE")]
    pub xacro_args: Vec<String>,
    /// Override a config field, e.g. --set world.timestep=0.001 or --set robots.0.floating_base=true.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// Pacing: realtime, fast (as fast as possible) or paused.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Real-time factor target in realtime mode.
    #[arg(long, value_name = "FACTOR")]
    pub speed: Option<f64>,
    /// Physics timestep in seconds.
    #[arg(long, value_name = "SECONDS")]
    pub timestep: Option<f64>,
    /// Physics steps per pacing tick.
    #[arg(long, value_name = "N")]
    pub substeps: Option<u32>,
    /// Headless batch run: stop after this much simulated time (seconds).
    #[arg(long, value_name = "SECONDS", conflicts_with = "steps")]
    pub duration: Option<f64>,
    /// Headless batch run: stop after this many physics steps.
    #[arg(long, value_name = "N")]
    pub steps: Option<u64>,
    /// Print the model summary and exit.
    #[arg(long)]
    pub summary: bool,
    /// Write the compiled world as a standalone MJCF file (its mesh, texture and height-field
    /// files copied into FILE's folder, under `<stem>_assets/`), check that MuJoCo loads it
    /// into the same model, and exit.
    #[arg(long, value_name = "FILE.xml")]
    pub export_mjcf: Option<PathBuf>,
    /// With --export-mjcf: write this robot alone, under its own names.
    #[arg(long, value_name = "NAME", requires = "export_mjcf")]
    pub export_robot: Option<String>,
    /// Start from this keyframe (a robot's own name such as `ready`, or a full name).
    #[arg(long, value_name = "NAME")]
    pub keyframe: Option<String>,
    /// Start from a snapshot file (refused if it was taken from another model).
    #[arg(long, value_name = "FILE")]
    pub load_snapshot: Option<PathBuf>,
    /// Write a snapshot file when the run ends.
    #[arg(long, value_name = "FILE")]
    pub save_snapshot: Option<PathBuf>,
    /// Record qpos and qvel of every step to a CSV file.
    #[arg(long, value_name = "FILE.csv")]
    pub record: Option<PathBuf>,
    /// Play a CSV trajectory, or the step records of an MCAP recording (`--every-step`),
    /// back kinematically (the run pauses at its end).
    #[arg(long, value_name = "FILE.csv|FILE.mcap")]
    pub replay: Option<PathBuf>,
    /// Record every topic to an MCAP file (rosbag2's format), off the physics thread.
    #[arg(long, value_name = "FILE.mcap")]
    pub mcap: Option<PathBuf>,
    /// Record the full state of every physics step in the MCAP file too.
    #[arg(long)]
    pub every_step: bool,
    /// Serve the Foxglove WebSocket protocol (default 127.0.0.1:8765): open the Foxglove app
    /// or Lichtblick on ws://ADDRESS.
    #[arg(long, value_name = "IP:PORT", num_args = 0..=1,
          default_missing_value = crate::config::FOXGLOVE_ADDRESS)]
    pub foxglove: Option<String>,
    /// Serve the legacy ZMQ protocol on 127.0.0.1 ports BASE (state), BASE+1 (control) and
    /// BASE+2 (info); URLab's are 5555..5557.
    #[arg(long, value_name = "BASE")]
    pub zmq_port: Option<u16>,
    /// Open a window of the running world (needs an X11 display: DISPLAY).
    #[arg(long)]
    pub viewer: bool,
    /// Closing the viewer window stops the bridge (otherwise it runs on without a window).
    #[arg(long, requires = "viewer")]
    pub viewer_close_quits: bool,
    /// Write a PNG picture of the world when the run ends (after --steps or --duration; at
    /// once without them), drawn headless: no display needed.
    #[arg(long, value_name = "FILE.png")]
    pub screenshot: Option<PathBuf>,
    /// The camera of --screenshot: a model camera (its full name, or a robot's own name for
    /// it); the model's free camera otherwise.
    #[arg(long, value_name = "NAME", requires = "screenshot")]
    pub screenshot_camera: Option<String>,
    /// The free camera of --screenshot: azimuth and elevation in degrees, distance in metres.
    #[arg(long, value_name = "AZIMUTH,ELEVATION,DISTANCE", requires = "screenshot",
          conflicts_with = "screenshot_camera", value_parser = parse_view)]
    pub screenshot_view: Option<[f64; 3]>,
    /// The size of --screenshot.
    #[arg(long, value_name = "WIDTHxHEIGHT", default_value = "1280x720", value_parser = parse_size)]
    pub screenshot_size: (u32, u32),
    /// Read operations from standard input, one per line: reset, pause, realtime, fast,
    /// step N, run N [fast], speed F, keyframe NAME, save NAME, restore NAME, twist ROBOT VX VY WZ,
    /// actions ROBOT MASK, source ROBOT ros|zmq|player, stats, arrivals, quit.
    #[arg(long)]
    pub console: bool,
}

impl Cli {
    /// The config overrides the CLI flags stand for, followed by the explicit `--set` ones.
    pub fn all_overrides(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(mode) = &self.mode {
            out.push(format!("sim.mode={mode}"));
        }
        if let Some(speed) = self.speed {
            out.push(format!("sim.speed={speed}"));
        }
        if let Some(ts) = self.timestep {
            out.push(format!("world.timestep={ts}"));
        }
        if let Some(n) = self.substeps {
            out.push(format!("sim.substeps={n}"));
        }
        if let Some(base) = self.zmq_port {
            out.push("zmq.enabled=true".into());
            for (key, port) in [
                ("state", base as u32),
                ("control", base as u32 + 1),
                ("info", base as u32 + 2),
            ] {
                out.push(format!("zmq.{key}=tcp://127.0.0.1:{port}"));
            }
        }
        if let Some(address) = &self.foxglove {
            out.push("foxglove.enabled=true".into());
            out.push(format!("foxglove.address={address}"));
        }
        if self.every_step {
            out.push("record.every_step=true".into());
        }
        out.extend(self.overrides.iter().cloned());
        out
    }
}

/// `WIDTHxHEIGHT`, each 1 to 8192 pixels.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parsed = text
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
    match parsed {
        Some((w, h)) if (1..=8192).contains(&w) && (1..=8192).contains(&h) => Ok((w, h)),
        _ => Err(format!(
            "'{text}' is not WIDTHxHEIGHT with 1 to 8192 pixels each (e.g. 1280x720)"
        )),
    }
}

/// `AZIMUTH,ELEVATION,DISTANCE`: finite, the distance positive.
fn parse_view(text: &str) -> Result<[f64; 3], String> {
    let values: Result<Vec<f64>, _> = text.split(',').map(|v| v.trim().parse::<f64>()).collect();
    match values.as_deref() {
        Ok(&[a, e, d]) if [a, e, d].iter().all(|v| v.is_finite()) && d > 0.0 => Ok([a, e, d]),
        _ => Err(format!(
            "'{text}' is not AZIMUTH,ELEVATION,DISTANCE (degrees, degrees, metres > 0; e.g. 135,-20,2.5)"
        )),
    }
}

/// Splits `args` into this program's arguments and the ROS arguments (`--ros-args ... [--]`).
pub fn split_ros_args(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut own = Vec::new();
    let mut ros = Vec::new();
    let mut in_ros = false;
    for arg in args {
        if arg == "--ros-args" {
            in_ros = true;
            ros.push(arg);
        } else if in_ros && arg == "--" {
            in_ros = false;
        } else if in_ros {
            ros.push(arg);
        } else {
            own.push(arg);
        }
    }
    (own, ros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_args_are_set_aside() {
        let args = [
            "bin",
            "--steps",
            "5",
            "--ros-args",
            "-r",
            "__ns:=/a",
            "--",
            "--summary",
        ]
        .map(String::from)
        .to_vec();
        let (own, ros) = split_ros_args(args);
        assert_eq!(own, ["bin", "--steps", "5", "--summary"]);
        assert_eq!(ros, ["--ros-args", "-r", "__ns:=/a"]);
    }
}
