//! Real-world URDF quirks that ROS tools accept, each on a small hand-made file: the repair is
//! logged as a warning naming the file and the element, the robot loads with the expected
//! MuJoCo structure and steps with a finite state; `strict` refuses the same file. Also COLLADA
//! meshes, xacro files with arguments, and the floating-base rule.
mod common;

use common::*;
use mujoco_rs::prelude::*;
use std::path::Path;

const INERTIA_1KG: &str = r#"<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>"#;

/// A file with one of each repair the loader makes, in the shapes real files have them.
fn quirky_urdf(dir: &Path) -> String {
    // A package found only because its meshes sit beside the URDF, and one on ROS_PACKAGE_PATH
    // written with three slashes.
    write_cube_stl(&dir.join("robot/meshes/cube.stl"), 0.05);
    write_cube_stl(&dir.join("ws/shared_meshes/meshes/cube.stl"), 0.05);
    std::fs::write(
        dir.join("ws/shared_meshes/package.xml"),
        "<package><name>shared_meshes</name></package>",
    )
    .unwrap();
    let urdf = format!(
        r#"<?xml version="1.0"?>
<robot name="quirky" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <material name="blue"><color rgba="0 0 1"/></material>
  <link name="base" gazebo_only="yes">{INERTIA_1KG}
    <visual><geometry><sphere radius="0"/></geometry></visual>
    <visual><origin xyz="0 0"/><geometry><box size="$(optenv MUJOCO_BRIDGE_TEST_UNSET 0.2 0.2 0.1)"/></geometry>
      <material name="blue"/></visual>
    <collision><geometry><mesh filename="package://quirky_description/meshes/cube.stl"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><mass value="1"/><inertia ixx="0.001" iyy="0.001" izz="0.5" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><mesh filename="package:///shared_meshes/meshes/cube.stl"/></geometry></collision><visual><geometry><mesh filename="/home/author/ws/meshes/upper.dae"/></geometry></visual>
  </link>
  <link name="lower">
    <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0.3" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="sensor_mount"/>
  <link name="tip"/>
  <joint name="mount" type="fixed"><parent link="base"/><child link="sensor_mount"/><axis xyz="0 0 0"/></joint>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.1" rpy="0 0 0 0"/>
    <axis xyz="0 0 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="lower"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 1 0"/><limit lower="1" upper="-1" effort="10" velocity="1"/>
    <mimic joint="no_such_joint" multiplier="2"/>
  </joint>
  <joint name="wrist" type="continuous"><parent link="lower"/><child link="tip"/><axis xyz="0 0 1"/>
    <mimic joint="mount"/></joint>
</robot>
  "#
    );
    let path = dir.join("robot/urdf/quirky.urdf");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A trailing NUL, as some exporters write.
    std::fs::write(&path, format!("{urdf}\0")).unwrap();
    path.display().to_string()
}

/// The geoms of `body` in `group` (2 visual, 3 collision).
fn geoms(m: &MjModel, body: usize, group: i32) -> Vec<usize> {
    (0..m.ffi().ngeom as usize)
        .filter(|g| m.geom_bodyid()[*g] as usize == body && m.geom_group()[*g] == group)
        .collect()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn each_repair_is_a_named_warning_and_the_robot_loads_and_steps() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = quirky_urdf(dir.path());
    let ros_path = dir.path().join("ws").display().to_string();
    let env = [
        ("ROS_PACKAGE_PATH", ros_path.as_str()),
        ("AMENT_PREFIX_PATH", ""),
        ("RUST_LOG", "info"),
    ];
    let out = run_bridge(&["--urdf", &urdf, "--steps", "500", "--mode", "fast"], &env);
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    let expected = [
        ("after </robot>", "trailing bytes ignored"),
        ("material 'blue' (line 3)/color@rgba", "3 numbers"),
        ("link 'base' (line 4)/visual[0]", "treated as absent"),
        ("link 'base' (line 4)/visual[1]/origin@xyz", "2 numbers"),
        ("/box@size", "evaluated to '0.2 0.2 0.1'"),
        (
            "link 'upper' (line 10)/visual[0]",
            "visual mesh '/home/author/ws/meshes/upper.dae' resolves to '/home/author/ws/meshes/upper.dae', which does not exist: the visual is left out",
        ),
        (
            "link 'upper' (line 10)/collision[0]",
            "read as 'package://shared_meshes/",
        ),
        ("link 'upper' (line 10)/inertial", "-> ["),
        ("link 'lower' (line 14)/inertial", "not physical"),
        ("link 'tip' (line 18)/inertial", "no mass in its subtree"),
        (
            "joint 'shoulder' (line 20)/axis",
            "replaced by URDF's default [1, 0, 0]",
        ),
        ("joint 'shoulder' (line 20)/origin@rpy", "4 numbers"),
        ("joint 'elbow' (line 24)/limit", "swapped"),
        (
            "joint 'wrist' (line 29)/mimic",
            "a mimic needs two revolute, continuous or prismatic joints: dropped",
        ),
        (
            "joint 'elbow' (line 24)/mimic",
            "'no_such_joint', which is not defined: dropped",
        ),
    ];
    for (element, action) in expected {
        assert!(
            stderr.lines().any(|l| l.contains("WARN")
                && l.contains(&urdf)
                && l.contains(element)
                && l.contains(action)),
            "no warning for {element} ({action}) in:\n{stderr}"
        );
    }
    assert!(
        stderr.contains(
            "15 repairs: 3 inertias, 1 axis, 1 limit, 3 vectors, 1 shape, 2 mimics, \
             1 package path, 1 substitution, 1 trailing text, 1 visual"
        ),
        "one summary line per robot:\n{stderr}"
    );
    // A package found beside the URDF is resolution, not a repair: one line per robot.
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("INFO") && l.contains("1 mesh file(s) found beside the URDF")),
        "{stderr}"
    );
    assert!(!stderr.contains("found beside the URDF at"), "{stderr}");
    // The fixed joint's zero axis is no repair: fixed joints have no axis.
    assert!(!stderr.contains("joint 'mount'"), "{stderr}");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("steps 500") && report.contains("instabilities 0"),
        "{report}"
    );

    // The MuJoCo structure the repairs give.
    let world = world_from_yaml(
        &format!(
            "robots:\n  - name: q\n    urdf: {urdf}\n    package_search_paths: [{ros_path}]\n"
        ),
        Path::new("."),
    );
    let m = &world.model;
    let robot = &world.robots[0];
    assert_eq!(robot.floating_joint, None, "an arm on a table stays fixed");
    let shoulder = robot.joint("shoulder").unwrap().id;
    assert_eq!(m.jnt_axis()[shoulder], [1.0, 0.0, 0.0]);
    let elbow = robot.joint("elbow").unwrap().id;
    assert_eq!(m.jnt_range()[elbow], [-1.0, 1.0]);
    assert_eq!(
        m.ffi().neq,
        0,
        "the dangling mimic and the fixed one are dropped"
    );
    assert!(robot.joint("mount").is_none());
    for link in ["upper", "lower", "tip"] {
        let body = robot.body(link).unwrap().id;
        let mut i = m.body_inertia()[body];
        i.sort_by(f64::total_cmp);
        assert!(
            i[0] > 0.0 && i[0] + i[1] >= i[2] * (1.0 - 1e-9),
            "{link}: {i:?}"
        );
        assert!(m.body_mass()[body] > 0.0, "{link}");
    }
    let base = robot.body("base").unwrap().id;
    let visuals = geoms(m, base, 2);
    assert_eq!(
        visuals.len(),
        1,
        "the zero sphere is absent, the box is kept"
    );
    assert_eq!(m.geom_size()[visuals[0]], [0.1, 0.1, 0.05]);
    let rgba = m.geom_rgba()[visuals[0]];
    assert_eq!(rgba, [0.0, 0.0, 1.0, 1.0], "a 3-number colour gets alpha 1");
}

#[test]
fn strict_refuses_what_would_be_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = quirky_urdf(dir.path());
    let ros_path = dir.path().join("ws").display().to_string();
    let env = [
        ("ROS_PACKAGE_PATH", ros_path.as_str()),
        ("AMENT_PREFIX_PATH", ""),
    ];
    let out = run_bridge(&["--urdf", &urdf, "--strict", "--summary"], &env);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("error:")).unwrap();
    assert!(
        error.contains(&urdf) && error.contains("strict: the URDF needs 15 repairs"),
        "{error}"
    );
    assert!(
        error.contains("after </robot>"),
        "the first repair's element: {error}"
    );

    // The config's `strict` does the same, and a clean file passes.
    let config = dir.path().join("strict.yaml");
    std::fs::write(
        &config,
        format!("robots:\n  - name: q\n    urdf: {urdf}\n    strict: true\n"),
    )
    .unwrap();
    let out = run_bridge(&["--config", config.to_str().unwrap(), "--summary"], &env);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let clean = dir.path().join("clean.urdf");
    std::fs::write(
        &clean,
        format!("<robot name=\"c\"><link name=\"a\">{INERTIA_1KG}</link></robot>"),
    )
    .unwrap();
    let out = run_bridge(
        &["--urdf", clean.to_str().unwrap(), "--strict", "--summary"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// A COLLADA box of 100 x 200 x 300 mm, in millimetres, with Y up.
const BOX_DAE: &str = r##"<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="millimeter" meter="0.001"/><up_axis>Y_UP</up_axis></asset>
  <library_geometries><geometry id="box" name="box"><mesh>
    <source id="box-pos"><float_array id="box-pos-array" count="24">
      -50 -100 -150  50 -100 -150  50 100 -150  -50 100 -150
      -50 -100 150  50 -100 150  50 100 150  -50 100 150</float_array>
      <technique_common><accessor source="#box-pos-array" count="8" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="box-vtx"><input semantic="POSITION" source="#box-pos"/></vertices>
    <triangles count="12"><input semantic="VERTEX" source="#box-vtx" offset="0"/>
      <p>0 2 1 0 3 2 4 5 6 4 6 7 0 1 5 0 5 4 1 2 6 1 6 5 2 3 7 2 7 6 3 0 4 3 4 7</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="scene"><node id="node">
    <instance_geometry url="#box"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>"##;

#[test]
fn a_collada_meshed_link_gets_its_collision_mesh() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("box.dae"), BOX_DAE).unwrap();
    let urdf = dir.path().join("dae.urdf");
    std::fs::write(
        &urdf,
        format!(
            r#"<robot name="d"><link name="base">{INERTIA_1KG}
  <visual><geometry><mesh filename="box.dae"/></geometry></visual>
  <collision><geometry><mesh filename="box.dae" scale="2 2 2"/></geometry></collision>
</link></robot>"#
        ),
    )
    .unwrap();
    let world = world_from_yaml(
        &format!("robots:\n  - name: d\n    urdf: {}\n", urdf.display()),
        Path::new("."),
    );
    let m = &world.model;
    let base = world.robots[0].body("base").unwrap().id;
    let collision = geoms(m, base, 3);
    assert_eq!(collision.len(), 1, "the COLLADA collision mesh is kept");
    let g = collision[0];
    assert_eq!(m.geom_type()[g], MjtGeomBase::mjGEOM_MESH);
    assert!(m.geom_contype()[g] != 0 || m.geom_conaffinity()[g] != 0);
    // Millimetres become metres: the box is 0.1 x 0.2 x 0.3 m, twice that for the scaled
    // collision geom (half sizes 0.1, 0.2, 0.3; MuJoCo turns a mesh to its principal axes, so
    // the up axis is checked by mesh.rs's own test, on the converted vertices).
    let mesh = m.geom_dataid()[g] as usize;
    let (start, count) = (
        m.mesh_vertadr()[mesh] as usize,
        m.mesh_vertnum()[mesh] as usize,
    );
    let mut half = [0.0f64; 3];
    for v in &m.mesh_vert()[start..start + count] {
        for k in 0..3 {
            half[k] = half[k].max((v[k] as f64).abs());
        }
    }
    half.sort_by(f64::total_cmp);
    for (got, want) in half.iter().zip([0.1, 0.2, 0.3]) {
        assert!((got - want).abs() < 1e-5, "half sizes {half:?}");
    }
}

#[test]
fn xacro_files_expand_with_arguments_and_find() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("ws/arm_description");
    std::fs::create_dir_all(pkg.join("urdf")).unwrap();
    std::fs::write(
        pkg.join("package.xml"),
        "<package><name>arm_description</name></package>",
    )
    .unwrap();
    write_cube_stl(&pkg.join("meshes/cube.stl"), 0.05);
    std::fs::write(
        pkg.join("urdf/parts.xacro"),
        r#"<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="segment" params="name length">
    <link name="${name}">
      <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
      <visual><geometry><box size="0.05 0.05 ${length}"/></geometry></visual>
      <collision><geometry><mesh filename="package://arm_description/meshes/cube.stl"/></geometry></collision>
    </link>
  </xacro:macro>
</robot>"#,
    )
    .unwrap();
    let main = pkg.join("urdf/arm.urdf.xacro");
    std::fs::write(
        &main,
        r#"<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.5"/>
  <xacro:include filename="$(find arm_description)/urdf/parts.xacro"/>
  <xacro:segment name="base" length="0.1"/>
  <xacro:segment name="upper" length="$(arg length)"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
</robot>"#,
    )
    .unwrap();
    let ros_path = dir.path().join("ws").display().to_string();
    let env = [
        ("ROS_PACKAGE_PATH", ros_path.as_str()),
        ("AMENT_PREFIX_PATH", ""),
    ];
    let main = main.display().to_string();

    let out = run_bridge(
        &["--urdf", &main, "--xacro-arg", "length:=0.8", "--summary"],
        &env,
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("robot arm_urdf") && summary.contains("j1"),
        "{summary}"
    );

    // The argument reaches the model: the upper visual box is 0.8 long (config xacro_args).
    for (args, length) in [("", 0.5), ("\n    xacro_args: {length: 0.8}", 0.8)] {
        let world = world_from_yaml(
            &format!(
                "robots:\n  - name: arm\n    urdf: {main}\n    package_search_paths: [{ros_path}]{args}\n"
            ),
            Path::new("."),
        );
        let m = &world.model;
        let upper = world.robots[0].body("upper").unwrap().id;
        let visual = geoms(m, upper, 2)[0];
        assert!(
            (m.geom_size()[visual][2] - length / 2.0).abs() < 1e-12,
            "{args}"
        );
    }

    // A broken xacro and a missing xacro program are one clear error each.
    let out = run_bridge(
        &["--urdf", &main, "--summary"],
        &[("MUJOCO_BRIDGE_XACRO", "/nonexistent/xacro")],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("error:") && stderr.contains("cannot run '/nonexistent/xacro'"),
        "{stderr}"
    );
    let broken = pkg.join("urdf/broken.urdf.xacro");
    std::fs::write(
        &broken,
        "<robot xmlns:xacro=\"http://www.ros.org/wiki/xacro\"><xacro:nope/></robot>",
    )
    .unwrap();
    let out = run_bridge(&["--urdf", broken.to_str().unwrap(), "--summary"], &env);
    assert_eq!(out.status.code(), Some(2));
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("broken.urdf.xacro: xacro failed"),
        "{stderr}"
    );
}

fn legged_urdf() -> String {
    let mut links = String::from("<link name=\"trunk\">");
    links.push_str(INERTIA_1KG);
    links.push_str("</link>");
    let mut joints = String::new();
    for (leg, y) in [("left", 0.1), ("right", -0.1)] {
        for part in ["thigh", "shin"] {
            links.push_str(&format!("<link name=\"{leg}_{part}\">{INERTIA_1KG}</link>"));
        }
        joints.push_str(&format!(
            r#"<joint name="{leg}_hip" type="revolute"><parent link="trunk"/><child link="{leg}_thigh"/>
  <origin xyz="0 {y} -0.05"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="20" velocity="5"/></joint>
<joint name="{leg}_knee" type="revolute"><parent link="{leg}_thigh"/><child link="{leg}_shin"/>
  <origin xyz="0 0 -0.25"/><axis xyz="0 1 0"/><limit lower="-2" upper="0" effort="20" velocity="5"/></joint>"#
        ));
    }
    format!("<robot name=\"biped\">{links}{joints}</robot>")
}

#[test]
fn legs_give_a_floating_base_unless_the_config_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = dir.path().join("biped.urdf");
    std::fs::write(&urdf, legged_urdf()).unwrap();
    let urdf = urdf.display().to_string();
    let out = run_bridge(&["--urdf", &urdf, "--summary"], &[]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("floating base: floating_base"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "base: floating (legs (limbs ending 0.1 m below the root, or a leg's name: \
             left_shin, right_shin))"
        ),
        "{summary}"
    );
    let out = run_bridge(
        &[
            "--urdf",
            &urdf,
            "--summary",
            "--set",
            "robots.0.floating_base=false",
        ],
        &[],
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("floating base: no"), "{summary}");
    assert!(
        summary.contains("base: fixed (floating_base: false in the config)"),
        "{summary}"
    );
}

/// A binary STL of one flat 0.2 x 0.1 m quad (two triangles) in the plane z = 0.
fn write_flat_stl(path: &Path) {
    let corners = [
        [0.0f32, 0.0, 0.0],
        [0.2, 0.0, 0.0],
        [0.2, 0.1, 0.0],
        [0.0, 0.1, 0.0],
    ];
    let mut bytes = vec![0u8; 80];
    bytes.extend_from_slice(&2u32.to_le_bytes());
    for tri in [[0, 1, 2], [0, 2, 3]] {
        for f in [0.0f32, 0.0, 1.0] {
            bytes.extend_from_slice(&f.to_le_bytes());
        }
        for i in tri {
            for f in corners[i] {
                bytes.extend_from_slice(&f.to_le_bytes());
            }
        }
        bytes.extend_from_slice(&[0, 0]);
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_flat_mesh_loads_as_visual_and_collides_as_a_thin_box() {
    // An ArUco marker plate: no volume for MuJoCo's default mesh inertia, no convex hull.
    let dir = tempfile::tempdir().unwrap();
    write_flat_stl(&dir.path().join("marker.stl"));
    let urdf = dir.path().join("marker.urdf");
    std::fs::write(
        &urdf,
        format!(
            r#"<robot name="m"><link name="base">{INERTIA_1KG}</link>
<link name="plate">{INERTIA_1KG}
  <visual><geometry><mesh filename="marker.stl"/></geometry></visual>
  <collision><origin xyz="0 0 0.5" rpy="0 0 1.5707963267948966"/><geometry><mesh filename="marker.stl"/></geometry></collision>
</link>
<joint name="j" type="fixed"><parent link="base"/><child link="plate"/></joint></robot>"#
        ),
    )
    .unwrap();
    let urdf = urdf.display().to_string();
    let out = run_bridge(&["--urdf", &urdf, "--steps", "100", "--mode", "fast"], &[]);
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "link 'plate' (line 2)/collision[0]: repaired: collision mesh 'marker' is flat"
        ),
        "{stderr}"
    );
    let world = world_from_yaml(
        &format!("robots:\n  - name: m\n    urdf: {urdf}\n"),
        Path::new("."),
    );
    let m = &world.model;
    let plate = world.robots[0].body("plate").unwrap().id;
    let visual = geoms(m, plate, 2)[0];
    assert_eq!(m.geom_type()[visual], MjtGeomBase::mjGEOM_MESH);
    let collision = geoms(m, plate, 3)[0];
    assert_eq!(m.geom_type()[collision], MjtGeomBase::mjGEOM_BOX);
    let mut size = m.geom_size()[collision];
    size.sort_by(f64::total_cmp);
    for (got, want) in size.iter().zip([0.0005, 0.05, 0.1]) {
        assert!((got - want).abs() < 1e-6, "{size:?}");
    }
    // Centred on the quad (0.1, 0.05 in the mesh), turned by the collision origin's yaw of
    // 90 degrees and raised to its height.
    let pos = m.geom_pos()[collision];
    for (got, want) in pos.iter().zip([-0.05, 0.1, 0.5]) {
        assert!((got - want).abs() < 1e-6, "{pos:?}");
    }
}

#[test]
fn a_massless_root_on_a_floating_base_moves_with_its_welded_links() {
    // robot_state_publisher's usual layout: a massless `trunk` root and the mass on a link
    // fixed to it. MuJoCo treats welded bodies as one rigid body, so nothing needs repair.
    let dir = tempfile::tempdir().unwrap();
    let text = legged_urdf().replace(
        &format!("<link name=\"trunk\">{INERTIA_1KG}</link>"),
        &format!(
            "<link name=\"trunk\"/><link name=\"trunk_inertia\">{INERTIA_1KG}</link>\
             <joint name=\"trunk_mass\" type=\"fixed\"><parent link=\"trunk\"/>\
             <child link=\"trunk_inertia\"/></joint>"
        ),
    );
    let urdf = dir.path().join("massless_root.urdf");
    std::fs::write(&urdf, text).unwrap();
    let urdf = urdf.display().to_string();
    let out = run_bridge(&["--urdf", &urdf, "--steps", "500", "--mode", "fast"], &[]);
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("repair"), "{stderr}");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("instabilities 0"), "{report}");
    let world = world_from_yaml(
        &format!("robots:\n  - name: b\n    urdf: {urdf}\n"),
        Path::new("."),
    );
    let m = &world.model;
    let robot = &world.robots[0];
    let free = robot.floating_joint.expect("legs float");
    let trunk = robot.body("trunk").unwrap().id;
    assert_eq!(m.jnt_bodyid()[free] as usize, trunk);
    // The free joint carries the trunk's welded mass and the legs: 1 + 4 x 1 kg.
    assert!(
        (m.body_subtreemass()[trunk] - 5.0).abs() < 1e-4,
        "{}",
        m.body_subtreemass()[trunk]
    );
}
