//! Bad input through the real binary: each case prints one `error:` line that names the file
//! and the element or field, and exits with code 2, never a panic or a MuJoCo abort.
mod common;

use common::*;
use std::path::Path;

/// Runs the binary and returns stderr, checking exit code 2 and a single error line.
fn expect_error(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = run_bridge(args, env);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "args {args:?}: stderr {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line expected: {stderr}");
    errors[0].to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const GOOD_LINK: &str = r#"<link name="base"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#;

#[test]
fn broken_mjcf_xml_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "broken.xml",
        "<mujoco>\n<worldbody>\n<body name=\"a\">\n<geom size=\"0.1\"/>\n</mujoco>\n",
    );
    let e = expect_error(&["--mjcf", &f, "--summary"], &[]);
    assert!(
        e.contains(&f) && e.contains("line 5") && e.contains("</body>"),
        "{e}"
    );
}

#[test]
fn mjcf_schema_violation_names_element() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "schema.xml",
        "<mujoco><worldbody><body><geom size=\"0.1\" bogus=\"1\"/></body></worldbody></mujoco>",
    );
    let e = expect_error(&["--mjcf", &f, "--summary"], &[]);
    assert!(
        e.contains(&f) && e.contains("'bogus'") && e.contains("Element 'geom'"),
        "{e}"
    );
}

#[test]
fn broken_urdf_xml_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "broken.urdf",
        &format!("<robot name=\"r\">\n{GOOD_LINK}\n<joint name=\"j\">\n</robot>"),
    );
    let e = expect_error(&["--urdf", &f, "--summary"], &[]);
    assert!(
        e.contains(&f) && e.contains("line 4") && e.contains("malformed XML"),
        "{e}"
    );
}

#[test]
fn missing_mesh_in_urdf_names_link_and_path() {
    // A missing collision mesh is an error; a missing visual mesh is a repair (the visual is
    // left out, as RViz shows the robot without it), which strict mode refuses.
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "mesh.urdf",
        "<robot name=\"r\"><link name=\"base\"><collision><geometry><mesh filename=\"meshes/nothere.stl\"/></geometry></collision></link></robot>",
    );
    let e = expect_error(&["--urdf", &f, "--summary"], &[]);
    assert!(
        e.contains(&f)
            && e.contains("link 'base' (line 1)/collision[0]")
            && e.contains("nothere.stl")
            && e.contains("does not exist"),
        "{e}"
    );
    let visual = write(
        dir.path(),
        "visual.urdf",
        "<robot name=\"r\"><link name=\"base\"><visual><geometry><mesh filename=\"/home/author/nothere.dae\"/></geometry></visual>\
         <collision><geometry><box size=\"0.1 0.1 0.1\"/></geometry></collision></link></robot>",
    );
    let out = run_bridge(&["--urdf", &visual, "--summary"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("WARN")
            && stderr.contains("link 'base' (line 1)/visual[0]")
            && stderr.contains("the visual is left out")
            && stderr.contains("1 repair: 1 visual"),
        "{stderr}"
    );
    let e = expect_error(&["--urdf", &visual, "--summary", "--strict"], &[]);
    assert!(e.contains("strict") && e.contains("visual[0]"), "{e}");
}

#[test]
fn missing_mesh_in_mjcf_names_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "mesh.xml",
        "<mujoco><asset><mesh name=\"m\" file=\"nothere.stl\"/></asset><worldbody><body><freejoint/><geom type=\"mesh\" mesh=\"m\"/></body></worldbody></mujoco>",
    );
    let e = expect_error(&["--mjcf", &f, "--summary"], &[]);
    assert!(e.contains(&f) && e.contains("nothere.stl"), "{e}");
}

#[test]
fn unknown_package_names_package_and_element() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "pkg.urdf",
        "<robot name=\"r\"><link name=\"base\"><collision><geometry><mesh filename=\"package://no_such_pkg/m.stl\"/></geometry></collision></link></robot>",
    );
    let e = expect_error(
        &["--urdf", &f, "--summary"],
        &[("AMENT_PREFIX_PATH", ""), ("ROS_PACKAGE_PATH", "")],
    );
    assert!(
        e.contains(&f)
            && e.contains("link 'base' (line 1)/collision[0]")
            && e.contains("unknown package 'no_such_pkg'"),
        "{e}"
    );
}

#[test]
fn urdf_structure_errors_name_the_joint() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "joint.urdf",
        &format!(
            "<robot name=\"r\">{GOOD_LINK}<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"ghost\"/><limit lower=\"0\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint></robot>"
        ),
    );
    let e = expect_error(&["--urdf", &f, "--summary"], &[]);
    assert!(
        e.contains("joint 'j'") && e.contains("child link 'ghost' is not defined"),
        "{e}"
    );

    // What no tool can read: a joint of an unknown type, a link named twice, a number that
    // is not one.
    let f = write(
        dir.path(),
        "kind.urdf",
        &format!(
            "<robot name=\"r\">{GOOD_LINK}<link name=\"b\"/><joint name=\"k\" type=\"hinge\"><parent link=\"base\"/><child link=\"b\"/></joint></robot>"
        ),
    );
    let e = expect_error(&["--urdf", &f, "--summary"], &[]);
    assert!(
        e.contains("joint 'k' (line 1): unknown joint type 'hinge'"),
        "{e}"
    );
    let f = write(
        dir.path(),
        "twice.urdf",
        &format!("<robot name=\"r\">{GOOD_LINK}\n{GOOD_LINK}</robot>"),
    );
    let e = expect_error(&["--urdf", &f, "--summary"], &[]);
    assert!(
        e.contains("link 'base' (line 2): duplicate link name"),
        "{e}"
    );
    let f = write(
        dir.path(),
        "number.urdf",
        "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"$(arg m)\"/></inertial></link></robot>",
    );
    let e = expect_error(&["--urdf", &f, "--summary"], &[]);
    assert!(
        e.contains("link 'a' (line 1)/inertial/mass@value: '$(arg m)' is not a number"),
        "{e}"
    );
}

/// Writes `yaml` as `file` and runs the bridge on it with `args`: the one error line names
/// the config file and contains each of `expected`.
fn config_error(file: &str, yaml: &str, args: &[&str], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), file, yaml);
    let mut all = vec!["--config", c.as_str()];
    all.extend(args);
    let e = expect_error(&all, &[]);
    assert!(e.contains(&c), "the file is named: {e}");
    for part in expected {
        assert!(e.contains(part), "'{part}' expected in: {e}");
    }
}

/// One test per wrong config, so that one failing case does not hide the others.
macro_rules! config_cases {
    ($($name:ident: $file:literal, $yaml:expr, $expected:expr;)*) => { $(
        #[test]
        fn $name() {
            config_error($file, &$yaml, &[], &$expected);
        }
    )* };
}

config_cases! {
    config_typo_names_the_field: "typo.yaml",
        "robots:\n  - name: a\n    mjcf: x.xml\n    floting_base: true\n",
        ["robots[0]", "floting_base"];
    config_wrong_type_names_the_field: "type.yaml",
        "sim:\n  speed: fast\nrobots:\n  - name: a\n    mjcf: x.xml\n",
        ["sim.speed"];
    config_prefix_clash_names_both_robots: "prefix.yaml",
        "robots:\n  - name: g1\n    mjcf: x.xml\n  - name: g1_b\n    mjcf: x.xml\n",
        ["robots[1].name", "'g1_b' and 'g1'"];
    // NaN never reaches the schema: the YAML reader rejects it with its line.
    config_nan_is_refused_with_its_line: "nan.yaml",
        "world:\n  timestep: .nan\nrobots:\n  - name: a\n    mjcf: x.xml\n",
        ["line 2", ".nan"];
    config_negative_timestep_names_the_range: "neg.yaml",
        "world:\n  timestep: -0.001\nrobots:\n  - name: a\n    mjcf: x.xml\n",
        ["world.timestep", "(0, 0.1]"];
    config_missing_model_names_the_field: "noneed.yaml",
        "robots:\n  - name: a\n    mjcf: does_not_exist.xml\n",
        ["robots[0].mjcf", "does not exist"];
    config_pattern_matching_nothing_names_the_field: "pattern.yaml",
        format!(
            "robots:\n  - name: a\n    mjcf: {}\n    actuators:\n      - joints: \"nope_.*\"\n        type: motor\n",
            models().join("menagerie/franka_emika_panda/panda.xml").display()
        ),
        ["robots[0].actuators[0].joints", "nope_"];
    config_negative_rate_names_the_field: "rates.yaml",
        "ros:\n  rates:\n    joint_states: -5\nrobots:\n  - name: a\n    mjcf: x.xml\n",
        ["ros.rates.joint_states", "-5"];
    config_unknown_sensor_key_names_the_field: "sensors.yaml",
        "robots:\n  - name: a\n    mjcf: x.xml\n    ros:\n      imu:\n        - {topic: imu, gyroscope: g}\n",
        ["robots[0].ros.imu[0]", "gyroscope"];
    config_dds_interface_names_the_entry: "dds.yaml",
        "ros:\n  dds:\n    interfaces: [127.0.0.1, localhost]\nrobots:\n  - name: a\n    mjcf: x.xml\n",
        ["ros.dds.interfaces[1]", "localhost"];
    config_dds_mapping_names_the_field: "mapping.yaml",
        "ros:\n  dds:\n    service_mapping: zenoh\nrobots:\n  - name: a\n    mjcf: x.xml\n",
        ["ros.dds.service_mapping", "zenoh"];
    config_yaml_syntax_is_named: "syntax.yaml", "robots: [\n  - name: a\n", ["invalid YAML"];
    config_camera_rate_names_the_field: "camera_rate.yaml",
        "robots:\n  - name: a\n    mjcf: x.xml\n    cameras:\n      - {camera: c, rate: 0}\n",
        ["robots[0].cameras[0].rate", "more than 0", "got 0"];
    config_camera_size_names_the_field: "camera_size.yaml",
        "robots:\n  - name: a\n    mjcf: x.xml\n    cameras:\n      - {camera: c, width: 0}\n",
        ["robots[0].cameras[0].width", "1 to 8192 pixels"];
    config_lidar_range_names_the_field: "lidar_range.yaml",
        "robots:\n  - name: a\n    mjcf: x.xml\n    lidars:\n      - {name: l, body: b, range_min: 5, range_max: 1}\n",
        ["robots[0].lidars[0].range_max", "range_min < range_max"];
    config_lidar_fov_names_the_field: "lidar_fov.yaml",
        "robots:\n  - name: a\n    mjcf: x.xml\n    lidars:\n      - {name: l, body: b, vertical_fov: [10, -10]}\n",
        ["robots[0].lidars[0].vertical_fov", "[10, -10]"];
}

/// A sensor mapping that names a missing or wrong sensor, in a robot model that exists: the
/// ROS outputs are planned at load, so `--summary`, `--steps` and every build (this one may
/// have no ROS at all) refuse it as the node would, with the field.
#[test]
fn a_wrong_sensor_mapping_is_refused_at_load_by_every_mode() {
    let robot = "robots:\n  - name: a\n    mjcf_string: |\n      <mujoco><worldbody><body name=\"b\"><freejoint/><geom size=\"0.1\"/><site name=\"s\"/></body></worldbody><sensor><gyro name=\"g\" site=\"s\"/><rangefinder name=\"r\" site=\"s\"/></sensor></mujoco>\n    ros:\n";
    for args in [&["--summary"][..], &["--steps", "1"][..]] {
        config_error(
            "range.yaml",
            &format!("{robot}      range: [{{topic: front, sensor: nope}}]\n"),
            args,
            &["robots[0].ros.range[0].sensor: robot 'a' has no sensor 'nope'"],
        );
        config_error(
            "imu.yaml",
            &format!("{robot}      imu: [{{topic: imu, orientation: g}}]\n"),
            args,
            &["robots[0].ros.imu[0].orientation: sensor 'g' is not a framequat sensor"],
        );
    }
}

/// Cameras and lidars that name nothing of the model are refused at load with the field, by
/// every mode; so is a mount on a body the model lacks.
#[test]
fn cameras_and_lidars_naming_nothing_are_refused_at_load() {
    let robot = "robots:\n  - name: a\n    mjcf_string: |\n      <mujoco><worldbody><body name=\"b\"><geom size=\"0.1\"/><camera name=\"eye\"/></body></worldbody></mujoco>\n";
    for args in [&["--summary"][..], &["--steps", "1"][..]] {
        config_error(
            "camera.yaml",
            &format!("{robot}    cameras: [{{camera: nope}}]\n"),
            args,
            &["robots[0].cameras[0].camera: robot 'a' has no camera 'nope' (it has: eye)"],
        );
        config_error(
            "mount.yaml",
            &format!("{robot}    cameras: [{{camera: new, mount: {{body: nobody}}}}]\n"),
            args,
            &["robots[0].cameras[0].mount.body", "no body 'nobody'"],
        );
        config_error(
            "lidar.yaml",
            &format!("{robot}    lidars: [{{name: l, body: nobody}}]\n"),
            args,
            &["robots[0].lidars[0].body: robot 'a' has no body 'nobody'"],
        );
    }
}

#[test]
fn missing_config_file_and_bad_flags() {
    let e = expect_error(&["--config", "/nonexistent/robot.yaml"], &[]);
    assert!(
        e.contains("/nonexistent/robot.yaml") && e.contains("cannot read config"),
        "{e}"
    );
    let e = expect_error(&["--set", "sim.speed=-2", "--summary"], &[]);
    assert!(
        e.contains("sim.speed") && e.contains("real-time factor from 0.001 to 1000"),
        "{e}"
    );
    let e = expect_error(&["--set", "no_equals_sign", "--summary"], &[]);
    assert!(e.contains("field.path=value"), "{e}");
    let e = expect_error(&["--mode", "warp", "--summary"], &[]);
    assert!(e.contains("sim.mode") && e.contains("warp"), "{e}");
    let e = expect_error(&["--set", "zmq.state=tcp://*:5555", "--summary"], &[]);
    assert!(
        e.contains("zmq.state") && e.contains("allow_all_interfaces"),
        "{e}"
    );
    let e = expect_error(
        &["--set", "zmq.control=udp://127.0.0.1:1", "--summary"],
        &[],
    );
    assert!(e.contains("zmq.control") && e.contains("tcp://"), "{e}");
    // clap's own usage errors also exit with 2.
    let out = run_bridge(&["--no-such-flag"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// Input that only shows past parsing, in a real run (not just `--summary`): a NUL character
/// in a model string, and a model whose memory MuJoCo cannot allocate.
#[test]
fn a_nul_character_or_an_impossible_memory_size_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "nul.yaml",
        "robots:\n  - name: a\n    mjcf_string: \"<mujoco>\\0<worldbody/></mujoco>\"\n",
    );
    let e = expect_error(&["--config", &c, "--steps", "10"], &[]);
    assert!(
        e.contains(&c) && e.contains("robots[0].mjcf_string") && e.contains("NUL"),
        "{e}"
    );
    let f = write(
        dir.path(),
        "huge.xml",
        "<mujoco><size memory=\"1000G\"/><worldbody><body><freejoint/><geom size=\"0.1\"/></body></worldbody></mujoco>",
    );
    let e = expect_error(&["--mjcf", &f, "--steps", "10"], &[]);
    assert!(e.contains(&f) && e.contains("allocate memory"), "{e}");
}

/// What one world may hold: pixels over its cameras, rays over its lidars, robots.
#[test]
fn a_world_beyond_its_limits_is_refused_naming_the_limit() {
    let default = repo().join("config/default.yaml");
    let default = default.to_str().unwrap();
    let e = expect_error(
        &[
            "--config",
            default,
            "--summary",
            "--set",
            "limits.camera_pixels=1000",
        ],
        &[],
    );
    assert!(
        e.contains("307200 pixels over its cameras") && e.contains("limits.camera_pixels (1000)"),
        "{e}"
    );
    let e = expect_error(
        &["--config", default, "--summary", "--set", "limits.robots=0"],
        &[],
    );
    assert!(e.contains("limits.robots"), "{e}");
    let e = expect_error(
        &[
            "--config",
            default,
            "--summary",
            "--set",
            "limits.world_bound=-1",
        ],
        &[],
    );
    assert!(e.contains("limits.world_bound"), "{e}");
}

/// A robot's ros2_control controllers file is read at load: a wrong one is refused with the
/// file and the field in it; a good one is listed by `--summary` with each type.
#[test]
fn a_controllers_file_is_read_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let robot = "robots:\n  - name: a\n    mjcf_string: |\n      <mujoco><worldbody><body name=\"b\"><joint name=\"j\"/><geom size=\"0.1\"/></body></worldbody></mujoco>\n    controllers: c.yaml\n";
    let config = write(dir.path(), "robot.yaml", robot);
    let wrong =
        "controller_manager:\n  ros__parameters:\n    update_rate: 100\n    arm: {type: 7}\n";
    let file = write(dir.path(), "c.yaml", wrong);
    let e = expect_error(&["--config", &config, "--summary"], &[]);
    assert!(e.contains(&file), "the controllers file is named: {e}");
    assert!(
        e.contains("controller_manager.ros__parameters.arm.type: must name the controller's type"),
        "{e}"
    );
    let good = "controller_manager:\n  ros__parameters:\n    update_rate: 100\n    arm:\n      type: position_controllers/JointGroupPositionController\narm:\n  ros__parameters:\n    joints: [j]\n";
    write(dir.path(), "c.yaml", good);
    let stdout = summary(&["--config", &config]);
    assert!(
        stdout.contains(&format!(
            "ros2_control controllers (1) from {file}, update_rate 100 Hz: arm (position_controllers/JointGroupPositionController)"
        )),
        "{stdout}"
    );
    // Given as ros2_control_node is given it, through --ros-args --params-file.
    let stdout = summary(&["--ros-args", "--params-file", &file]);
    assert!(
        stdout.contains(&format!("ros2_control controllers (1) from {file}")),
        "{stdout}"
    );
}

/// What `--summary` prints with `args`, which must load.
fn summary(args: &[&str]) -> String {
    let out = run_bridge(&[&["--summary"], args].concat(), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_robot_description_parameter_is_the_robot_and_its_gz_plugin_names_the_controllers() {
    let dir = tempfile::tempdir().unwrap();
    let controllers = write(
        dir.path(),
        "c.yaml",
        "controller_manager:\n  ros__parameters:\n    jsb: {type: joint_state_broadcaster/JointStateBroadcaster}\n",
    );
    let urdf = format!(
        "<robot name='two link'><link name='world'/><link name='a'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link><joint name='j' type='revolute'><parent link='world'/><child link='a'/><limit lower='-1' upper='1' effort='10' velocity='1'/></joint><gazebo><plugin filename='gz_ros2_control-system' name='gz_ros2_control::GazeboSimROS2ControlPlugin'><parameters>{controllers}</parameters></plugin></gazebo></robot>"
    );
    let params = write(
        dir.path(),
        "p.yaml",
        &format!(
            "/**:\n  ros__parameters:\n    use_sim_time: true\n    robot_description: {}\n",
            serde_json::to_string(&urdf).unwrap()
        ),
    );
    let stdout = summary(&["--ros-args", "--params-file", &params]);
    assert!(
        stdout.contains("robot two_link (prefix 'two_link_') from <robot_description>"),
        "{stdout}"
    );
    assert!(stdout.contains("joints (1): j (hinge"), "{stdout}");
    assert!(
        stdout.contains(&format!("ros2_control controllers (1) from {controllers}")),
        "{stdout}"
    );
    // Not URDF text: refused with the parameter's name.
    let wrong = write(
        dir.path(),
        "w.yaml",
        "/**:\n  ros__parameters:\n    robot_description: 7\n",
    );
    let e = expect_error(&["--summary", "--ros-args", "--params-file", &wrong], &[]);
    assert!(e.contains("robot_description: must be URDF text"), "{e}");
}

#[test]
fn servo_gains_that_are_not_positive_numbers_are_refused() {
    for gain in [".nan", "-5", "0"] {
        let e = expect_error(
            &[
                "--summary",
                "--set",
                &format!("robots.0.urdf_gains.position_kp={gain}"),
            ],
            &[],
        );
        // NaN is refused where YAML is read, the others where the config is checked.
        assert!(e.contains("urdf_gains.position_kp"), "{gain}: {e}");
        assert!(
            e.contains("must be a positive number") || e.contains("non-finite"),
            "{gain}: {e}"
        );
    }
}
