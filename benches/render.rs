//! Camera and lidar benchmark (Unitree Go1 with its head camera, config/go1.yaml). Prints,
//! from one run, side by side:
//! (a) frames/s of the bridge's render thread at 640x480, RGB and RGB + depth, `fast` and
//!     `full`, divided by MuJoCo's own Python `Renderer` (benches/render_python.py) with the
//!     same settings on the same compiled model (saved as MJB); with the render thread's CPU
//!     per frame (its GL driver's threads included);
//! (b) the real-time factor of Go1 at 1 kHz while one camera renders at its maximum rate,
//!     beside the same run without a camera;
//! (c) lidar rays/s of the bridge's caster (16 x 1800 rays per scan, back to back) divided
//!     by a Python loop of `mj_kinematics` and `mujoco.mj_multiRay` on the same model, from
//!     the same pose, with the same rays: in Go1's world (a floor) and among 60 static geoms;
//! (d) the real-time factor of Go1 at 1 kHz with a 16 x 1800 lidar at 10 Hz, beside none;
//! (e) a segmentation camera at 640x480 `fast`: the render thread's frames/s and CPU per
//!     frame with the segmentation pass beside RGB alone, and beside the Python `Renderer`'s
//!     RGB and segmentation passes; the CPU per frame of its maps, label maps and boxes (the
//!     frames thread's work); the real-time factor while it renders back to back.
//! Run: bash scripts/bench-render.sh (BENCH_CAMERAS_ONLY=1: (a) and (e); BENCH_LIDAR_ONLY=1:
//! (c) and (d)).
#[path = "common/threads.rs"]
mod threads;

use mujoco_bridge::config::{Config, LidarConfig, RenderQuality, SimMode};
use mujoco_bridge::model::{World, build_world, pose};
use mujoco_bridge::render::{
    CameraSpec, PlannedCamera, Renderer, Scan, Slot, start_lidars, start_renderer_planned,
};
use mujoco_bridge::sim::Simulation;
use std::process::Command;
use std::time::{Duration, Instant};

const SECONDS: f64 = 5.0;
const RTF_SECONDS: f64 = 8.0;
const ROUNDS: usize = 2;

fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn config(overrides: &[&str]) -> Config {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::load(&repo().join("config/go1.yaml"), &overrides).expect("config")
}

/// Asks for frames (or scans) back to back for `seconds`; returns how many came.
fn back_to_back<T: Clone + Default>(request: impl Fn(), slot: &Slot<T>, seconds: f64) -> u64 {
    let mut item = T::default();
    let mut seen = 0;
    let (start, mut done) = (Instant::now(), 0u64);
    request();
    while start.elapsed().as_secs_f64() < seconds {
        if slot.read(&mut item, &mut seen) {
            done += 1;
            request();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    done
}

/// The Python reference's figure; NaN with BENCH_NO_PYTHON=1 (a machine without MuJoCo's
/// Python bindings, such as a lent GPU machine).
fn python(args: &[String]) -> f64 {
    if std::env::var("BENCH_NO_PYTHON").is_ok_and(|v| v == "1") {
        return f64::NAN;
    }
    let out = Command::new(repo().join(".deps/venv/bin/python"))
        .arg(repo().join("benches/render_python.py"))
        .args(args)
        .output()
        .expect("python (scripts/bench-render.sh installs mujoco)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().parse().unwrap_or_else(|_| {
        panic!(
            "render_python.py {args:?}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Draws frames for a second, uncounted: the first ones make the GL context and compile the
/// driver's shaders (the Python reference likewise draws one before its clock starts).
fn warm_up(cameras: &mujoco_bridge::render::Cameras) {
    back_to_back(|| cameras.request(0), cameras.slot(0), 1.0);
}

/// The head camera of config/go1.yaml at 640x480.
fn head_camera(world: &World) -> usize {
    camera_of(world).spec.camera
}

fn camera_of(world: &World) -> PlannedCamera {
    world.sensors.cameras[0].clone()
}

/// A render thread that draws `camera` with `spec` in every world, never released, at the
/// normal weight (what the benchmark measures is its throughput).
fn one_camera(camera: PlannedCamera, spec: CameraSpec) -> Renderer {
    let camera = PlannedCamera { spec, ..camera };
    start_renderer_planned(Duration::ZERO, 0, move |_| vec![camera.clone()]).expect("renderer")
}

fn cameras(world: &World, config: &Config, mjb: &std::path::Path) {
    let camera = head_camera(world);
    let sim = Simulation::start(world, &config.sim).unwrap();
    for quality in [RenderQuality::Fast, RenderQuality::Full] {
        for depth in [false, true] {
            let spec = CameraSpec {
                camera,
                width: 640,
                height: 480,
                quality,
                depth,
                near: None,
                far: None,
                segmentation: false,
            };
            let renderer = one_camera(camera_of(world), spec);
            let cameras = renderer.sources(&sim.handle().world());
            warm_up(&cameras);
            let (mut bridge, mut reference, mut cpu) = (0.0, 0.0, 0.0);
            let mut frames = 0;
            for _ in 0..ROUNDS {
                let before = threads::threads_cpu("self", &["cameras", "llvmpipe"]);
                let done = back_to_back(|| cameras.request(0), cameras.slot(0), SECONDS);
                cpu += threads::threads_cpu("self", &["cameras", "llvmpipe"]) - before;
                frames += done;
                bridge += done as f64 / SECONDS;
                reference += python(&[
                    mjb.display().to_string(),
                    "camera".into(),
                    camera.to_string(),
                    format!("{quality:?}").to_lowercase(),
                    depth.to_string(),
                    SECONDS.to_string(),
                ]);
            }
            let (bridge, reference) = (bridge / ROUNDS as f64, reference / ROUNDS as f64);
            println!(
                "(a) camera 640x480 {} {:<4}: bridge {bridge:.1} frames/s, MuJoCo Python Renderer {reference:.1} frames/s, ratio {:.2} (target >= 1.0); render thread CPU {:.1} ms per frame",
                if depth { "RGB+depth" } else { "RGB      " },
                format!("{quality:?}").to_lowercase(),
                bridge / reference,
                cpu / frames.max(1) as f64 * 1e3,
            );
        }
    }
    println!("    (the Python reference reads depth in a second pass, as its Renderer does)");
}

/// Sim time over wall time of Go1 at 1 kHz realtime for `seconds`, with `load` running.
fn real_time_factor(
    world: &World,
    config: &Config,
    load: impl FnOnce(&mujoco_bridge::sim::SimHandle, f64),
) -> f64 {
    let sim = Simulation::start(world, &config.sim).unwrap();
    let handle = sim.handle();
    handle.set_mode(SimMode::Realtime).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let (sim0, wall0) = (handle.stats().sim_time, Instant::now());
    load(&handle, RTF_SECONDS);
    let rtf = (handle.stats().sim_time - sim0) / wall0.elapsed().as_secs_f64();
    drop(sim);
    rtf
}

fn camera_rtf(world: &World, config: &Config) {
    let camera = head_camera(world);
    let mut pairs = Vec::new();
    for _ in 0..ROUNDS {
        let idle = real_time_factor(world, config, |_, s| {
            std::thread::sleep(Duration::from_secs_f64(s))
        });
        let mut frames = 0;
        let streaming = real_time_factor(world, config, |handle, seconds| {
            let spec = CameraSpec {
                camera,
                width: 640,
                height: 480,
                quality: RenderQuality::Fast,
                depth: true,
                near: None,
                far: None,
                segmentation: false,
            };
            let renderer = one_camera(camera_of(world), spec);
            let cameras = renderer.sources(&handle.world());
            frames = back_to_back(|| cameras.request(0), cameras.slot(0), seconds);
        });
        pairs.push((idle, streaming, frames as f64 / RTF_SECONDS));
    }
    for (idle, streaming, fps) in pairs {
        println!(
            "(b) Go1 at 1 kHz realtime: real-time factor {streaming:.4} while a 640x480 RGB+depth camera renders back to back ({fps:.1} frames/s), {idle:.4} without (target 1.00 +- 0.01)"
        );
    }
}

fn lidar_config() -> LidarConfig {
    LidarConfig {
        name: "velo".into(),
        body: "trunk".into(),
        xyz: [0.0, 0.0, 0.1],
        rpy: [0.0; 3],
        channels: 16,
        samples: 1800,
        vertical_fov: [-15.0, 15.0],
        horizontal_fov: [-180.0, 180.0],
        range_min: 0.1,
        range_max: 30.0,
        resolution: 0.0,
        rate: 10.0,
        topic: None,
        frame_id: None,
    }
}

/// (c) in `world` (`scene` says what surrounds the lidar).
fn lidar_throughput(world: &World, config: &Config, mjb: &std::path::Path, scene: &str) {
    let planned = &world.sensors.lidars;
    let rays = planned[0].spec.rays.len() as f64;
    let sim = Simulation::start(world, &config.sim).unwrap();
    let caster = start_lidars(Duration::ZERO, 0).expect("caster");
    let lidars = caster.sources(&sim.handle().world());
    // The reference casts the same rays from the same place: the lidar's pose in this state.
    let mut state = sim.handle().latest_state_buffer();
    sim.handle().latest_state(&mut state);
    let spec = &planned[0].spec;
    let lidar_pose = pose::body_pose(&state.xpos, &state.xquat_wxyz, spec.body)
        * pose::isometry(&spec.xyz, &spec.quat_wxyz);
    let (t, q) = (
        lidar_pose.translation.vector,
        pose::wxyz(&lidar_pose.rotation),
    );
    let lidar_pose: Vec<String> = [t.x, t.y, t.z, q[0], q[1], q[2], q[3]]
        .iter()
        .map(|v| v.to_string())
        .collect();
    // ... in the same state, with the same geoms (the lidar's own robot's) left out.
    let qpos: Vec<String> = state.qpos.iter().map(|v| v.to_string()).collect();
    let own: Vec<String> = (spec.own.iter().enumerate())
        .filter(|(_, own)| **own)
        .map(|(geom, _)| geom.to_string())
        .collect();
    let (mut bridge, mut reference) = (0.0, 0.0);
    for _ in 0..ROUNDS {
        let before = threads::threads_cpu("self", &["lidars"]);
        let scans = back_to_back::<Scan>(|| lidars.request(0), lidars.slot(0), SECONDS);
        let cpu = threads::threads_cpu("self", &["lidars"]) - before;
        bridge += scans as f64 * rays / SECONDS;
        reference += python(&[
            mjb.display().to_string(),
            "lidar".into(),
            "16".into(),
            "1800".into(),
            SECONDS.to_string(),
            lidar_pose.join(","),
            qpos.join(","),
            own.join(","),
        ]);
        println!(
            "    lidar round: {scans} scans, caster CPU {:.1} ms per scan",
            cpu / scans.max(1) as f64 * 1e3
        );
    }
    let (bridge, reference) = (bridge / ROUNDS as f64, reference / ROUNDS as f64);
    println!(
        "(c) lidar 16 x 1800 rays, {scene}: bridge caster {:.2} M rays/s, Python mj_multiRay loop {:.2} M rays/s, ratio {:.2}",
        bridge / 1e6,
        reference / 1e6,
        bridge / reference
    );
}

/// Go1's config with a lidar on its trunk and a second, static "robot" of `CLUTTER` geoms
/// around it at 1 to 5.5 m (boxes, cylinders, spheres, capsules), written to `dir`.
fn cluttered_config(dir: &std::path::Path) -> Config {
    let mut geoms = String::new();
    let kinds = ["box", "cylinder", "sphere", "capsule"];
    for i in 0..CLUTTER {
        let angle = i as f64 * 2.399_963; // the golden angle: spread evenly around
        let distance = 1.0 + (i % 10) as f64 * 0.5;
        let size = 0.1 + 0.05 * (i % 5) as f64;
        geoms.push_str(&format!(
            "<geom type='{}' pos='{:.3} {:.3} {:.3}' size='{size} {size} {size}'/>\n",
            kinds[i % kinds.len()],
            distance * angle.cos(),
            distance * angle.sin(),
            size + 0.05 * (i % 3) as f64,
        ));
    }
    let mjcf = dir.join("clutter.xml");
    std::fs::write(
        &mjcf,
        format!("<mujoco><worldbody>{geoms}</worldbody></mujoco>"),
    )
    .expect("clutter MJCF");
    let go1 = std::fs::read_to_string(repo().join("config/go1.yaml")).expect("go1.yaml");
    let robot = format!("  - name: clutter\n    mjcf: {}\nzmq:", mjcf.display());
    let yaml = dir.join("cluttered.yaml");
    std::fs::write(&yaml, go1.replacen("\nzmq:", &format!("\n{robot}"), 1)).expect("YAML");
    let overrides = [
        "world.timestep=0.001".to_string(),
        "zmq.enabled=false".into(),
    ];
    let mut config = Config::load(&yaml, &overrides).expect("cluttered config");
    config.robots[0].lidars.push(lidar_config());
    config
}

const CLUTTER: usize = 60;

/// (d): the real-time factor with a lidar casting at 10 Hz, beside none.
fn lidar_rtf(world: &World, config: &Config) {
    for _ in 0..ROUNDS {
        let idle = real_time_factor(world, config, |_, s| {
            std::thread::sleep(Duration::from_secs_f64(s))
        });
        let mut scans = 0;
        let casting = real_time_factor(world, config, |handle, seconds| {
            let caster = start_lidars(Duration::ZERO, 0).expect("caster");
            let lidars = caster.sources(&handle.world());
            let (start, mut next) = (Instant::now(), Instant::now());
            let mut scan = Scan::default();
            let mut seen = 0;
            while start.elapsed().as_secs_f64() < seconds {
                if Instant::now() >= next {
                    lidars.request(0);
                    next += Duration::from_millis(100);
                }
                if lidars.slot(0).read(&mut scan, &mut seen) {
                    scans += 1;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        println!(
            "(d) Go1 at 1 kHz realtime: real-time factor {casting:.4} with a 16 x 1800 lidar at 10 Hz ({:.1} scans/s), {idle:.4} without",
            scans as f64 / RTF_SECONDS
        );
    }
}

/// The render thread's frames/s and CPU ms per frame of `spec` back to back, over `ROUNDS`.
fn frames_per_second(world: &World, sim: &Simulation, spec: CameraSpec) -> (f64, f64) {
    let renderer = one_camera(camera_of(world), spec);
    let cameras = renderer.sources(&sim.handle().world());
    warm_up(&cameras);
    let (mut frames, mut cpu) = (0, 0.0);
    for _ in 0..ROUNDS {
        let before = threads::threads_cpu("self", &["cameras", "llvmpipe"]);
        frames += back_to_back(|| cameras.request(0), cameras.slot(0), SECONDS);
        cpu += threads::threads_cpu("self", &["cameras", "llvmpipe"]) - before;
    }
    let rate = frames as f64 / (SECONDS * ROUNDS as f64);
    (rate, cpu / frames.max(1) as f64 * 1e3)
}

fn segmentation(world: &World, config: &Config, mjb: &std::path::Path) {
    use mujoco_bridge::config::{InstanceUnit, SemanticClass};
    use mujoco_bridge::topics::segmentation::{self as maps, Labels};
    let camera = head_camera(world);
    let sim = Simulation::start(world, &config.sim).unwrap();
    let spec = |segmentation| CameraSpec {
        camera,
        width: 640,
        height: 480,
        quality: RenderQuality::Fast,
        depth: false,
        near: None,
        far: None,
        segmentation,
    };
    let (rgb, rgb_cpu) = frames_per_second(world, &sim, spec(false));
    let (both, both_cpu) = frames_per_second(world, &sim, spec(true));
    let reference = |second: &str| {
        let args = [
            mjb.display().to_string(),
            "camera".into(),
            camera.to_string(),
            "fast".into(),
        ];
        let args = [&args[..], &[second.into(), SECONDS.to_string()]].concat();
        python(&args)
    };
    let (python_rgb, python_both) = (reference("false"), reference("segmentation"));
    println!(
        "(e) segmentation camera 640x480 fast: bridge RGB {rgb:.1} frames/s ({rgb_cpu:.1} ms CPU a frame), RGB+segmentation {both:.1} frames/s ({both_cpu:.1} ms), cost of the pass {:.2}x RGB's; MuJoCo Python Renderer RGB {python_rgb:.1}, RGB+segmentation {python_both:.1} frames/s, ratio {:.2} (target >= 1.0)",
        both_cpu / rgb_cpu,
        both / python_both,
    );
    // The messages of one frame, made as the frames thread makes them: every robot geom and
    // the floor labelled, so that every pixel counts for a box.
    let renderer = one_camera(camera_of(world), spec(true));
    let cameras = renderer.sources(&sim.handle().world());
    let mut frame = mujoco_bridge::render::Frame::default();
    back_to_back(|| cameras.request(0), cameras.slot(0), 0.5);
    cameras.slot(0).read(&mut frame, &mut 0);
    let class = |name: &str, robots: Vec<String>, geoms: Vec<String>| SemanticClass {
        name: name.into(),
        id: None,
        robots,
        bodies: Vec::new(),
        geoms,
    };
    let classes = [
        class("robot", vec![world.robots[0].name.clone()], Vec::new()),
        class("floor", Vec::new(), vec!["floor".into()]),
    ];
    let labels =
        Labels::of_world(&world.model, &world.robots, &classes, InstanceUnit::Body).unwrap();
    let (mut image, mut boxes, mut bounds) = Default::default();
    let (start, mut made) = (Instant::now(), 0);
    while start.elapsed().as_secs_f64() < SECONDS {
        maps::fill_semantic_labels(&mut image, &frame, "eye", &labels);
        maps::fill_semantic_colored(&mut image, &frame, "eye", &labels);
        maps::fill_instance_labels(&mut image, &frame, "eye", &labels);
        maps::fill_instance_colored(&mut image, &frame, "eye", &labels);
        maps::fill_detections(&mut boxes, &frame, "eye", &labels, &mut bounds);
        made += 1;
    }
    let seen = frame.segments.iter().filter(|g| **g >= 0).count();
    println!(
        "    the four maps and the boxes of one frame: {:.2} ms CPU ({} of {} pixels see a geom, {} boxes)",
        start.elapsed().as_secs_f64() * 1e3 / made as f64,
        seen,
        frame.segments.len(),
        boxes.detections.len(),
    );
    drop(renderer);
    drop(sim);
    let idle = real_time_factor(world, config, |_, s| {
        std::thread::sleep(Duration::from_secs_f64(s))
    });
    let mut frames = 0;
    let streaming = real_time_factor(world, config, |handle, seconds| {
        let renderer = one_camera(camera_of(world), spec(true));
        let cameras = renderer.sources(&handle.world());
        frames = back_to_back(|| cameras.request(0), cameras.slot(0), seconds);
    });
    println!(
        "    Go1 at 1 kHz realtime: real-time factor {streaming:.4} while it renders back to back ({:.1} frames/s), {idle:.4} without (target 1.00 +- 0.01)",
        frames as f64 / RTF_SECONDS
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut config = config(&["world.timestep=0.001", "zmq.enabled=false"]);
    config.robots[0].lidars.push(lidar_config());
    let world = build_world(&config).expect("world");
    let mjb = std::env::temp_dir().join(format!("bench-render-{}.mjb", std::process::id()));
    world.model.save_to_file(&mjb).expect("MJB");
    println!(
        "== camera and lidar benchmark, Unitree Go1 ({})",
        config.origin
    );
    let only = |part: &str| std::env::var(part).is_ok_and(|v| v == "1");
    if !only("BENCH_LIDAR_ONLY") {
        cameras(&world, &config, &mjb);
        segmentation(&world, &config, &mjb);
        if only("BENCH_CAMERAS_ONLY") {
            return;
        }
        camera_rtf(&world, &config);
    }
    lidar_throughput(&world, &config, &mjb, "Go1 on a floor");
    let dir = std::env::temp_dir().join(format!("bench-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    let cluttered = cluttered_config(&dir);
    let among = build_world(&cluttered).expect("cluttered world");
    let among_mjb = dir.join("cluttered.mjb");
    among.model.save_to_file(&among_mjb).expect("MJB");
    let scene = format!("Go1 among {CLUTTER} geoms");
    lidar_throughput(&among, &cluttered, &among_mjb, &scene);
    let _ = std::fs::remove_dir_all(&dir);
    lidar_rtf(&world, &config);
    let _ = std::fs::remove_file(&mjb);
}
