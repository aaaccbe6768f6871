//! The GPS receivers, barometers and altimeters a robot's config places on its bodies
//! (`gps:`, `barometers:`, `altimeters:`): each a site of the sensor's name with a
//! `framepos` and a `framelinvel` sensor on it (`{name}_position`, `{name}_velocity`),
//! added to the robot's spec before it joins the world, so that the physics thread
//! measures them with its other sensors.
use crate::config::{PointSensorConfig, RobotConfig};
use crate::error::{InputError, InputResult};
use mujoco_rs::prelude::*;

/// The sensor measuring where the point is, in the world frame.
pub fn position_sensor(name: &str) -> String {
    format!("{name}_position")
}

/// The sensor measuring the point's linear velocity, in the world frame.
pub fn velocity_sensor(name: &str) -> String {
    format!("{name}_velocity")
}

/// Adds robot `index`'s GPS receivers, barometers and altimeters to its spec (names
/// without the robot prefix, which attaching adds).
pub fn mount(
    robot: &RobotConfig,
    spec: &mut MjSpec,
    origin: &str,
    index: usize,
) -> InputResult<()> {
    for (key, list) in robot.point_sensors() {
        for (k, sensor) in list.iter().enumerate() {
            let field = format!("robots[{index}].{key}[{k}]");
            mount_one(sensor, spec, origin, &field)?;
        }
    }
    Ok(())
}

fn mount_one(
    sensor: &PointSensorConfig,
    spec: &mut MjSpec,
    origin: &str,
    field: &str,
) -> InputResult<()> {
    let refused =
        |what: String, at: &str| InputError::new(origin, what).at(format!("{field}.{at}"));
    if spec.site(&sensor.name).is_some() {
        return Err(refused(
            format!(
                "the model already has a site '{}': name the sensor otherwise",
                sensor.name
            ),
            "name",
        ));
    }
    let body = spec
        .body_mut(&sensor.body)
        .ok_or_else(|| refused(format!("the model has no body '{}'", sensor.body), "body"))?;
    // Group 5: a site the viewer and cameras do not draw by default.
    let site = body.add_site().with_pos(sensor.xyz).with_size([0.005; 3]);
    site.set_group(5);
    site.set_name(&sensor.name)
        .map_err(|e| refused(format!("cannot name its site: {e}"), "name"))?;
    let kinds = [
        (MjtSensor::mjSENS_FRAMEPOS, position_sensor(&sensor.name)),
        (MjtSensor::mjSENS_FRAMELINVEL, velocity_sensor(&sensor.name)),
    ];
    for (kind, name) in kinds {
        let added = spec.add_sensor().with_type(kind);
        added.set_objtype(MjtObjBase::mjOBJ_SITE);
        added.set_objname(&sensor.name);
        added
            .set_name(&name)
            .map_err(|e| refused(format!("cannot name its sensor {name}: {e}"), "name"))?;
    }
    Ok(())
}
