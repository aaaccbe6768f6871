//! URDF import checked against the MuJoCo structure it must produce: package:// and file://
//! meshes, visual vs collision geoms, floating base, actuators from <ros2_control> and
//! <transmission>, mimic joints as equality constraints, limits / damping / friction, the
//! <mujoco> extension, and several robots composed under prefixes.
mod common;

use common::*;
use mujoco_rs::prelude::*;
use std::path::Path;

fn joint_id(world: &mujoco_bridge::model::World, robot: usize, name: &str) -> usize {
    world.robots[robot]
        .joint(name)
        .unwrap_or_else(|| panic!("joint {name}"))
        .id
}

fn actuator_id(world: &mujoco_bridge::model::World, robot: usize, name: &str) -> usize {
    world.robots[robot]
        .actuator(name)
        .unwrap_or_else(|| panic!("actuator {name}"))
        .id
}

#[test]
fn default_robot_structure() {
    let world = world_from_config_file("default.yaml");
    let m = &world.model;
    let robot = &world.robots[0];
    assert_eq!(robot.name, "mobile");
    assert!(robot.urdf.is_some(), "robot_description is kept");

    // Floating base: a free joint on the root link, whose parent is the world.
    let free = robot.floating_joint.expect("free joint");
    assert_eq!(m.jnt_type()[free], MjtJoint::mjJNT_FREE);
    let base = robot.body("base_link").unwrap().id;
    assert_eq!(m.jnt_bodyid()[free] as usize, base);
    assert_eq!(m.body_parentid()[base], 0);

    // Every link is a body, fixed links included.
    for link in [
        "imu_link",
        "laser_link",
        "arm_base_link",
        "finger_right_link",
    ] {
        assert!(robot.body(link).is_some(), "{link}");
    }

    // Limits, damping, friction and effort limits are kept.
    let elbow = joint_id(&world, 0, "arm_elbow");
    assert!(m.jnt_limited()[elbow]);
    assert_eq!(m.jnt_range()[elbow], [-2.4, 2.4]);
    let dof = m.jnt_dofadr()[elbow] as usize;
    assert!((m.dof_damping()[dof] - 0.3).abs() < 1e-12);
    assert!((m.dof_frictionloss()[dof] - 0.05).abs() < 1e-12);
    assert_eq!(m.jnt_actfrcrange()[elbow], [-30.0, 30.0]);
    let wheel = joint_id(&world, 0, "left_wheel_joint");
    assert!(!m.jnt_limited()[wheel], "continuous joints are unlimited");

    // Mimic: finger_right = 0 + 1 * finger_left, as a joint equality constraint.
    assert_eq!(m.ffi().neq, 1);
    assert_eq!(m.eq_type()[0], MjtEq::mjEQ_JOINT);
    assert_eq!(
        m.eq_obj1id()[0] as usize,
        joint_id(&world, 0, "finger_right_joint")
    );
    assert_eq!(
        m.eq_obj2id()[0] as usize,
        joint_id(&world, 0, "finger_left_joint")
    );
    assert_eq!(&m.eq_data()[0][..5], &[0.0, 1.0, 0.0, 0.0, 0.0]);

    // Actuators from <ros2_control>: velocity servos on the wheels, position servos on the
    // arm and the gripper, none on the mimic finger or the caster.
    assert_eq!(robot.actuators.len(), 7);
    let names: Vec<&str> = robot.actuators.iter().map(|a| a.name.as_str()).collect();
    assert!(!names.contains(&"finger_right_joint"));
    let left = actuator_id(&world, 0, "left_wheel_joint");
    assert_eq!(m.actuator_trnid()[left][0] as usize, wheel);
    assert_eq!(
        m.actuator_biasprm()[left][1],
        0.0,
        "velocity servo: no position term"
    );
    assert_eq!(m.actuator_biasprm()[left][2], -10.0, "velocity servo: -kv");
    assert_eq!(
        m.actuator_ctrlrange()[left],
        [-15.0, 15.0],
        "min/max params"
    );
    let shoulder = actuator_id(&world, 0, "arm_shoulder_pitch");
    assert_eq!(
        m.actuator_gainprm()[shoulder][0],
        400.0,
        "position servo: kp from the config's urdf_gains"
    );
    assert_eq!(m.actuator_biasprm()[shoulder][1], -400.0);
    assert_eq!(
        m.actuator_ctrlrange()[shoulder],
        [-1.8, 1.8],
        "ctrlrange = joint range"
    );
    assert_eq!(
        m.actuator_forcerange()[shoulder],
        [-40.0, 40.0],
        "forcerange = effort"
    );

    // Visual geoms in group 2 without collisions, collision geoms in group 3.
    let visual = m
        .name_to_id(MjtObjBase::mjOBJ_GEOM, "mobile_base_link_visual")
        .unwrap();
    let collision = m
        .name_to_id(MjtObjBase::mjOBJ_GEOM, "mobile_base_link_collision")
        .unwrap();
    assert_eq!(m.geom_group()[visual], 2);
    assert_eq!(
        (m.geom_contype()[visual], m.geom_conaffinity()[visual]),
        (0, 0)
    );
    assert_eq!(m.geom_group()[collision], 3);
    assert_eq!(m.geom_contype()[collision], 1);
    assert_eq!(
        m.geom_rgba()[visual],
        [0.2, 0.35, 0.7, 1.0],
        "material color from <material>"
    );

    // The <mujoco> extension: sites merged into laser_link, sensors added.
    let laser = robot.body("laser_link").unwrap().id;
    let rays: Vec<_> = robot
        .sites
        .iter()
        .filter(|s| s.name.starts_with("laser_ray_"))
        .collect();
    assert_eq!(rays.len(), 9);
    assert!(rays.iter().all(|s| m.site_bodyid()[s.id] as usize == laser));
    assert_eq!(robot.sensors.len(), 12);
    assert!(robot.sensor("range_4").is_some() && robot.sensor("imu_orientation").is_some());

    // The config's keyframe, prefixed, with the arm pose and matching position targets.
    let ready = robot.keyframe("ready").expect("keyframe").id;
    let nq = m.ffi().nq as usize;
    let key_qpos = &m.key_qpos()[ready * nq..(ready + 1) * nq];
    let elbow_adr = m.jnt_qposadr()[elbow] as usize;
    assert_eq!(key_qpos[elbow_adr], 1.2);
    let nu = m.ffi().nu as usize;
    let elbow_act = actuator_id(&world, 0, "arm_elbow");
    assert_eq!(
        m.key_ctrl()[ready * nu + elbow_act],
        1.2,
        "position target = keyframe pose"
    );
}

const TRANSMISSION_URDF: &str = r#"<robot name="two_link">
  <link name="world"/>
  <link name="base">
    <inertial><origin xyz="0 0 0.05" rpy="0 0 1.5707963267948966"/><mass value="2"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
    <visual><geometry><mesh filename="file://MESH_ABS" scale="2 2 2"/></geometry></visual>
    <collision><geometry><mesh filename="package://demo_meshes/meshes/cube.stl"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry><cylinder radius="0.02" length="0.4"/></geometry></collision>
  </link>
  <joint name="fix" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 0.5"/></joint>
  <joint name="slider" type="prismatic"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-0.1" upper="0.2" effort="80" velocity="1"/><dynamics damping="2" friction="0.5"/></joint>
  <transmission name="slider_trans">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="slider"><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
    <actuator name="slider_motor"><mechanicalReduction>50</mechanicalReduction></actuator>
  </transmission>
  <mujoco><option timestep="0.001"/><compiler discardvisual="true"/></mujoco>
</robot>"#;

fn transmission_fixture(dir: &Path) -> std::path::PathBuf {
    let pkg = dir.join("ws/src/demo_meshes");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("package.xml"),
        "<package format=\"3\"><name>demo_meshes</name></package>",
    )
    .unwrap();
    write_cube_stl(&pkg.join("meshes/cube.stl"), 0.05);
    let urdf = dir.join("two_link.urdf");
    let text = TRANSMISSION_URDF.replace(
        "MESH_ABS",
        &pkg.join("meshes/cube.stl").display().to_string(),
    );
    std::fs::write(&urdf, text).unwrap();
    urdf
}

#[test]
fn transmission_world_link_and_extension() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = transmission_fixture(dir.path());
    let yaml = format!(
        "robots:\n  - name: tl\n    urdf: {}\n    package_search_paths: [ws]\n",
        urdf.display()
    );
    let world = world_from_yaml(&yaml, dir.path());
    let m = &world.model;
    let robot = &world.robots[0];
    // The `world` link is MuJoCo's world: base hangs from it with no joint (fixed base).
    let base = robot.body("base").unwrap().id;
    assert_eq!(m.body_parentid()[base], 0);
    assert_eq!(m.body_jntnum()[base], 0);
    assert!(robot.floating_joint.is_none());
    assert_eq!(m.body_pos()[base], [0.0, 0.0, 0.5]);
    // The inertial frame's yaw of 90 deg is folded into the body frame: principal moments
    // are kept, mass too.
    assert!((m.body_mass()[base] - 2.0).abs() < 1e-12);
    let mut inertia = m.body_inertia()[base];
    inertia.sort_by(f64::total_cmp);
    for (got, want) in inertia.iter().zip([0.01, 0.02, 0.03]) {
        assert!((got - want).abs() < 1e-9, "{inertia:?}");
    }
    // <transmission> -> a motor named after the <actuator>, with the reduction as gear.
    let slider = robot.joint("slider").unwrap().id;
    assert_eq!(m.jnt_type()[slider], MjtJoint::mjJNT_SLIDE);
    assert_eq!(m.jnt_range()[slider], [-0.1, 0.2]);
    let motor = robot.actuator("slider_motor").expect("motor").id;
    assert_eq!(m.actuator_gear()[motor][0], 50.0);
    assert_eq!(m.actuator_biastype()[motor], MjtBias::mjBIAS_NONE);
    assert_eq!(m.actuator_ctrlrange()[motor], [-80.0, 80.0]);
    // <mujoco> extension: option and discardvisual honoured; the collision mesh came from
    // package:// through the search path (the discarded visual one was file://).
    assert_eq!(m.opt().timestep, 0.001);
    assert_eq!(m.ffi().nmesh, 1);
    assert!((0..m.ffi().ngeom as usize).all(|g| m.geom_group()[g] != 2));
}

#[test]
fn package_uri_resolved_from_ament_prefix_path_and_ros_package_path() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = transmission_fixture(dir.path());
    // Without any search path the package is unknown.
    let out = run_bridge(
        &["--urdf", urdf.to_str().unwrap(), "--summary"],
        &[("AMENT_PREFIX_PATH", ""), ("ROS_PACKAGE_PATH", "")],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown package 'demo_meshes'"), "{stderr}");
    assert!(
        stderr.contains("two_link.urdf") && stderr.contains("link 'base' (line 3)/collision[0]"),
        "{stderr}"
    );

    // AMENT_PREFIX_PATH: <prefix>/share/<package>.
    let prefix = dir.path().join("install");
    std::fs::create_dir_all(prefix.join("share")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("ws/src/demo_meshes"),
        prefix.join("share/demo_meshes"),
    )
    .unwrap();
    let ament = format!("/nonexistent:{}", prefix.display());
    let out = run_bridge(
        &["--urdf", urdf.to_str().unwrap(), "--summary"],
        &[("AMENT_PREFIX_PATH", &ament), ("ROS_PACKAGE_PATH", "")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("actuators (1): slider_motor"));

    // ROS_PACKAGE_PATH: crawled for a package.xml naming the package.
    let ros = dir.path().join("ws").display().to_string();
    let out = run_bridge(
        &["--urdf", urdf.to_str().unwrap(), "--summary"],
        &[("AMENT_PREFIX_PATH", ""), ("ROS_PACKAGE_PATH", &ros)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn barkour_urdf_from_the_registry_with_package_meshes() {
    let world = world_from_config_file("barkour.yaml");
    let m = &world.model;
    let robot = &world.robots[0];
    assert!(m.ffi().nmesh > 5, "package://assets meshes loaded");
    assert_eq!(
        m.jnt_type()[robot.floating_joint.unwrap()],
        MjtJoint::mjJNT_FREE
    );
    assert_eq!(robot.actuators.len(), 12, "actuators from the config");
    let knee = robot.actuator("knee_front_left").unwrap().id;
    assert_eq!(m.actuator_gainprm()[knee][0], 35.0);
    assert_eq!(m.actuator_forcerange()[knee], [-18.0, 18.0]);
    // Visual and collision copies of each mesh geom.
    let visual = (0..m.ffi().ngeom as usize)
        .filter(|g| m.geom_group()[*g] == 2)
        .count();
    let collision = (0..m.ffi().ngeom as usize)
        .filter(|g| m.geom_group()[*g] == 3)
        .count();
    assert!(
        visual > 10 && collision > 10,
        "{visual} visual, {collision} collision"
    );
}

#[test]
fn several_robots_under_prefixes_at_their_poses() {
    let yaml = format!(
        "world:\n  floor: true\nrobots:\n  - name: left\n    mjcf: {p}\n    pose: {{xyz: [0, 1, 0]}}\n  - name: right\n    mjcf: {p}\n    pose: {{xyz: [0, -1, 0], rpy: [0, 0, 1.5707963267948966]}}\n  - name: mobile\n    urdf: {u}\n    floating_base: true\n    pose: {{xyz: [2, 0, 0.0805]}}\n    keyframes: {{ready: {{joints: {{arm_elbow: 1.0}}}}}}\n",
        p = models()
            .join("menagerie/franka_emika_panda/panda.xml")
            .display(),
        u = repo().join("urdf/mobile_manipulator.urdf").display()
    );
    let world = world_from_yaml(&yaml, Path::new("."));
    let m = &world.model;
    let [left, right, mobile] = [&world.robots[0], &world.robots[1], &world.robots[2]];
    assert_eq!(left.joints.len(), 9);
    assert_eq!(right.joints.len(), 9);
    assert_eq!(left.joints[0].full_name, "left_joint1");
    assert_eq!(right.actuators[0].full_name, "right_actuator1");
    // Disjoint ids.
    let ids =
        |r: &mujoco_bridge::model::RobotMap| r.joints.iter().map(|j| j.id).collect::<Vec<_>>();
    assert!(ids(left).iter().all(|id| !ids(right).contains(id)));
    // Placement.
    let l0 = left.body("link0").unwrap().id;
    let r0 = right.body("link0").unwrap().id;
    assert_eq!(m.body_pos()[l0], [0.0, 1.0, 0.0]);
    assert_eq!(m.body_pos()[r0], [0.0, -1.0, 0.0]);
    let q = m.body_quat()[r0];
    assert!(
        (q[0] - 0.5f64.sqrt()).abs() < 1e-9 && (q[3] - 0.5f64.sqrt()).abs() < 1e-9,
        "{q:?}"
    );
    // Keyframes: each robot's own, prefixed, padded with the others' default pose.
    assert_eq!(left.keyframes[0].name, "home");
    assert_eq!(mobile.keyframes[0].full_name, "mobile_ready");
    let nq = m.ffi().nq as usize;
    let k = right.keyframe("home").unwrap().id;
    let key = &m.key_qpos()[k * nq..(k + 1) * nq];
    let right_j4 = m.jnt_qposadr()[right.joint("joint4").unwrap().id] as usize;
    let left_j4 = m.jnt_qposadr()[left.joint("joint4").unwrap().id] as usize;
    // Menagerie's panda.xml writes joint4 = -1.57079 in its home keyframe.
    assert!((key[right_j4] + std::f64::consts::FRAC_PI_2).abs() < 1e-4);
    assert_eq!(key[left_j4], 0.0);
    let free = m.jnt_qposadr()[mobile.floating_joint.unwrap()] as usize;
    assert_eq!(
        &key[free..free + 3],
        &[2.0, 0.0, 0.0805],
        "the mobile base stays where it was placed"
    );
}

#[test]
fn mjcf_include_and_mjcf_string_with_meshes() {
    // A file with <include>: Menagerie's Go1 scene includes go1.xml and adds a floor.
    let scene = models().join("menagerie/unitree_go1/scene.xml");
    let world = world_from_yaml(
        &format!("robots:\n  - name: go1\n    mjcf: {}\n", scene.display()),
        Path::new("."),
    );
    assert_eq!(world.robots[0].actuators.len(), 12);
    assert!(
        world
            .model
            .name_to_id(MjtObjBase::mjOBJ_GEOM, "go1_floor")
            .is_some()
    );

    // A string whose meshes resolve against base_dir.
    let xmls = models().join("mjlab/unitree_g1/xmls");
    let text = std::fs::read_to_string(xmls.join("g1.xml")).unwrap();
    let yaml = format!(
        "robots:\n  - name: g1\n    mjcf_string: {}\n    base_dir: {}\n",
        serde_json::to_string(&text).unwrap(),
        xmls.display()
    );
    let world = world_from_yaml(&yaml, Path::new("."));
    assert!(world.model.ffi().nmesh > 20);
    assert_eq!(world.robots[0].joints.len(), 30);
}

#[test]
fn urdf_string_as_robot_description() {
    let text = std::fs::read_to_string(repo().join("urdf/mobile_manipulator.urdf")).unwrap();
    let yaml = format!(
        "robots:\n  - name: r\n    urdf_string: {}\n",
        serde_json::to_string(&text).unwrap()
    );
    let world = world_from_yaml(&yaml, Path::new("."));
    assert_eq!(world.robots[0].actuators.len(), 7);
    assert_eq!(world.robots[0].urdf.as_deref(), Some(text.as_str()));
}

#[test]
fn mujoco_plugins_from_the_wheel_load() {
    let dir = tempfile::tempdir().unwrap();
    let xml = r#"<mujoco>
  <extension><plugin plugin="mujoco.pid"><instance name="pid"><config key="kp" value="40"/></instance></plugin></extension>
  <worldbody><body name="b"><joint name="slide" type="slide"/><geom size="0.1" mass="1"/></body></worldbody>
  <actuator><plugin name="servo" joint="slide" plugin="mujoco.pid" instance="pid"/></actuator>
</mujoco>"#;
    std::fs::write(dir.path().join("pid.xml"), xml).unwrap();
    let world = world_from_yaml("robots:\n  - name: p\n    mjcf: pid.xml\n", dir.path());
    assert_eq!(world.model.ffi().nplugin, 1);
    assert_eq!(world.robots[0].actuators[0].name, "servo");
}

/// An effort command interface becomes a motor with the joint's effort as its ctrlrange; the
/// floor and the light are there exactly when the config asks.
#[test]
fn effort_interface_gives_a_motor_and_the_world_has_floor_and_light_on_request() {
    let urdf = r#"<robot name="arm">
  <link name="base"/>
  <link name="upper"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="25" velocity="2"/></joint>
  <ros2_control name="arm" type="system">
    <joint name="shoulder"><command_interface name="effort"/><state_interface name="position"/></joint>
  </ros2_control>
</robot>"#;
    for (floor, light) in [(true, true), (false, false)] {
        let yaml = format!(
            "world: {{floor: {floor}, light: {light}}}\nrobots:\n  - name: arm\n    urdf_string: {}\n",
            serde_json::to_string(urdf).unwrap()
        );
        let world = world_from_yaml(&yaml, Path::new("."));
        let m = &world.model;
        let motor = actuator_id(&world, 0, "shoulder");
        assert_eq!(
            m.actuator_trnid()[motor][0] as usize,
            joint_id(&world, 0, "shoulder")
        );
        assert_eq!(
            m.actuator_gainprm()[motor][0],
            1.0,
            "a motor: ctrl is the torque"
        );
        assert_eq!(
            &m.actuator_biasprm()[motor][..3],
            &[0.0, 0.0, 0.0],
            "no servo terms"
        );
        assert_eq!(
            m.actuator_ctrlrange()[motor],
            [-25.0, 25.0],
            "ctrlrange = effort"
        );
        let floor_geom = (0..m.ffi().ngeom as usize)
            .find(|&g| m.geom_type()[g] == MjtGeomBase::mjGEOM_PLANE && m.geom_bodyid()[g] == 0);
        assert_eq!(floor_geom.is_some(), floor, "floor {floor}");
        assert_eq!(m.ffi().nlight > 0, light, "light {light}");
    }
}

#[test]
fn help_lists_the_batch_and_override_options() {
    let out = run_bridge(&["--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for option in [
        "--config",
        "--mjcf",
        "--urdf",
        "--duration",
        "--steps",
        "--summary",
        "--set",
    ] {
        assert!(help.contains(option), "--help lacks {option}:\n{help}");
    }
}

/// A fixed arm whose first link turns inside its base, as a UR5e's shoulder does: no contact
/// between the two, and servo gains from the rule (model::gains) where the config gives none.
const TURNING_IN_ITS_BASE: &str = r#"<robot name="arm">
  <link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="base"/></joint>
  <link name="base">
    <inertial><mass value="4"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.1"/><geometry><cylinder radius="0.08" length="0.2"/></geometry></collision>
  </link>
  <joint name="pan" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.15"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="150" velocity="3"/></joint>
  <link name="upper">
    <inertial><origin xyz="0.3 0 0"/><mass value="5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0"/><geometry><cylinder radius="0.07" length="0.1"/></geometry></collision>
  </link>
  <ros2_control name="arm" type="system">
    <hardware><plugin>gz_ros2_control/GazeboSimSystem</plugin></hardware>
    <joint name="pan"><command_interface name="position"/><state_interface name="position"/></joint>
  </ros2_control>
</robot>"#;

#[test]
fn a_link_turning_in_its_fixed_base_is_excluded_from_contact_with_it_and_its_servo_gains_follow_the_rule()
 {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("arm.urdf"), TURNING_IN_ITS_BASE).unwrap();
    let world = world_from_yaml("robots:\n  - name: arm\n    urdf: arm.urdf\n", dir.path());
    let m = &world.model;
    let robot = &world.robots[0];
    let (base, upper) = (
        robot.body("base").unwrap().id,
        robot.body("upper").unwrap().id,
    );
    assert_eq!(m.ffi().nexclude, 1);
    let pair = m.exclude_signature()[0];
    assert_eq!(
        pair,
        ((base as i32) << 16) + upper as i32,
        "exclude base-upper"
    );

    let servo = actuator_id(&world, 0, "pan");
    let inertia = m.dof_m0()[m.jnt_dofadr()[joint_id(&world, 0, "pan")] as usize];
    assert!(
        (inertia - (0.01 + 5.0 * 0.09)).abs() < 1e-6,
        "I = izz + m r^2: {inertia}"
    );
    let omega = 2.0 * std::f64::consts::PI * mujoco_bridge::model::gains::BANDWIDTH_HZ;
    // 0.46 kg m^2 at 10 Hz asks 1816 N m/rad; the full 150 N m at 0.05 rad asks 3000: the
    // larger governs.
    let kp = (inertia * omega * omega).max(150.0 / 0.05);
    assert!((m.actuator_gainprm()[servo][0] - kp).abs() < 1e-6);
    assert!((m.actuator_biasprm()[servo][1] + kp).abs() < 1e-6);
    assert!((m.actuator_biasprm()[servo][2] + 2.0 * (kp * inertia).sqrt()).abs() < 1e-6);
    assert!(robot.servo_gains.as_deref().unwrap().starts_with("pan kp "));
}

/// A fixed three-link chain (base, upper, lower) with collision shapes, and `gazebo` as
/// its `<gazebo>` elements.
fn chain(gazebo: &str) -> String {
    let link = |name: &str| {
        format!(
            r#"<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision></link>"#
        )
    };
    let joint = |name: &str, parent: &str, child: &str| {
        format!(
            r#"<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>"#
        )
    };
    format!(
        r#"<robot name="chain"><link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="base"/></joint>
  {}{}{}{}{}{gazebo}</robot>"#,
        link("base"),
        link("upper"),
        link("lower"),
        joint("shoulder", "base", "upper"),
        joint("elbow", "upper", "lower")
    )
}

#[test]
fn links_of_one_urdf_robot_collide_only_where_gazebo_self_collide_says() {
    let dir = tempfile::tempdir().unwrap();
    let excluded = |gazebo: &str| {
        std::fs::write(dir.path().join("chain.urdf"), chain(gazebo)).unwrap();
        let world = world_from_yaml(
            "robots:\n  - name: chain\n    urdf: chain.urdf\n",
            dir.path(),
        );
        let robot = &world.robots[0];
        let name = |id: i32| {
            robot
                .bodies
                .iter()
                .find(|b| b.id == id as usize)
                .unwrap()
                .name
                .clone()
        };
        let mut pairs: Vec<String> = world
            .model
            .exclude_signature()
            .iter()
            .map(|s| format!("{}-{}", name(s >> 16), name(s & 0xffff)))
            .collect();
        pairs.sort();
        pairs
    };
    // As a Gazebo model: no self-collision by default.
    assert_eq!(excluded(""), ["base-lower", "base-upper", "upper-lower"]);
    // Two links with it on collide with each other; the parent and its moving child never.
    assert_eq!(
        excluded(
            r#"<gazebo reference="base"><self_collide>true</self_collide></gazebo>
  <gazebo reference="lower"><selfCollide>1</selfCollide></gazebo>"#
        ),
        ["base-upper", "upper-lower"]
    );
    assert_eq!(
        excluded("<gazebo><self_collide>true</self_collide></gazebo>"),
        ["base-upper"],
        "the whole model: only the fixed base and the link turning in it"
    );
}

#[test]
fn a_urdf_declaring_no_actuator_gets_a_servo_per_moving_joint_unless_the_config_says_none() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chain.urdf"), chain("")).unwrap();
    let plain = world_from_yaml(
        "robots:\n  - name: chain\n    urdf: chain.urdf\n",
        dir.path(),
    );
    let robot = &plain.robots[0];
    let names: Vec<&str> = robot.actuators.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["shoulder", "elbow"]);
    let servo = actuator_id(&plain, 0, "elbow");
    assert_eq!(
        plain.model.actuator_forcerange()[servo],
        [-50.0, 50.0],
        "the URDF's effort limit"
    );
    // The rule's, not the placeholder of 1: full effort at 0.05 rad of error, as that is
    // stiffer than 10 Hz on this link and under its stability cap (w dt 1).
    let dof = plain.model.jnt_dofadr()[joint_id(&plain, 0, "elbow")] as usize;
    let inertia = plain.model.dof_m0()[dof];
    let timestep = plain.model.opt().timestep;
    let bandwidth = inertia * (2.0 * std::f64::consts::PI * 10.0).powi(2);
    let cap = inertia / timestep.powi(2);
    assert!(
        bandwidth < 50.0 / 0.05 && 50.0 / 0.05 < cap,
        "{bandwidth} {cap}"
    );
    let kp = plain.model.actuator_gainprm()[servo][0];
    assert!((kp - 50.0 / 0.05).abs() < 1e-6, "{kp}");
    assert!(robot.servo_gains.as_deref().unwrap().contains("elbow kp"));
    assert!(
        robot
            .actuator_rule
            .as_deref()
            .unwrap()
            .contains("a position servo on each of its 2 moving joints")
    );
    let none = world_from_yaml(
        "robots:\n  - name: chain\n    urdf: chain.urdf\n    actuators: none\n",
        dir.path(),
    );
    assert_eq!(none.model.ffi().nu, 0);
    assert!(none.robots[0].actuator_rule.is_none());
    let wrong = mujoco_bridge::config::Config::from_yaml(
        "robots:\n  - name: chain\n    urdf: chain.urdf\n    actuators: nothing\n",
        "test.yaml",
        dir.path(),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        wrong.contains("a list of actuator groups, or `none`"),
        "{wrong}"
    );
}
