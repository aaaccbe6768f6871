pub mod msg {
    use super::super::builtin_interfaces::msg::Duration;
    use super::super::geometry_msgs::msg::{Transform, Twist};
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "trajectory_msgs", "msg";
        JointTrajectoryPoint {
            positions: Vec<f64>,
            velocities: Vec<f64>,
            accelerations: Vec<f64>,
            effort: Vec<f64>,
            time_from_start: Duration,
        }
        JointTrajectory { header: Header, joint_names: Vec<String>, points: Vec<JointTrajectoryPoint> }
        MultiDOFJointTrajectoryPoint {
            transforms: Vec<Transform>,
            velocities: Vec<Twist>,
            accelerations: Vec<Twist>,
            time_from_start: Duration,
        }
        MultiDOFJointTrajectory {
            header: Header,
            joint_names: Vec<String>,
            points: Vec<MultiDOFJointTrajectoryPoint>,
        }
    }
}
