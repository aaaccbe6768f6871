pub mod msg {
    use super::super::std_msgs::msg::Header;
    use super::super::trajectory_msgs::msg::{JointTrajectoryPoint, MultiDOFJointTrajectoryPoint};

    super::super::structs! { "control_msgs", "msg";
        InterfaceValue { interface_names: Vec<String>, values: Vec<f64> }
        DynamicJointState {
            header: Header,
            joint_names: Vec<String>,
            interface_values: Vec<InterfaceValue>,
        }
        JointTrajectoryControllerState {
            header: Header,
            joint_names: Vec<String>,
            reference: JointTrajectoryPoint,
            feedback: JointTrajectoryPoint,
            error: JointTrajectoryPoint,
            output: JointTrajectoryPoint,
            multi_dof_joint_names: Vec<String>,
            multi_dof_reference: MultiDOFJointTrajectoryPoint,
            multi_dof_feedback: MultiDOFJointTrajectoryPoint,
            multi_dof_error: MultiDOFJointTrajectoryPoint,
            multi_dof_output: MultiDOFJointTrajectoryPoint,
            speed_scaling_factor: f64,
        }
        JointTolerance { name: String, position: f64, velocity: f64, acceleration: f64 }
        JointComponentTolerance {
            joint_name: String,
            component: u16,
            position: f64,
            velocity: f64,
            acceleration: f64,
        }
        GripperCommand { position: f64, max_effort: f64 }
    }
}

pub mod action {
    use super::super::builtin_interfaces::msg::Duration;
    use super::super::sensor_msgs::msg::JointState;
    use super::super::std_msgs::msg::Header;
    use super::super::trajectory_msgs::msg::{
        JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory,
        MultiDOFJointTrajectoryPoint,
    };
    use super::msg::{
        GripperCommand as GripperCommandMsg, JointComponentTolerance, JointTolerance,
    };

    super::super::action! { "control_msgs", FollowJointTrajectory {
        goal {
            trajectory: JointTrajectory,
            multi_dof_trajectory: MultiDOFJointTrajectory,
            path_tolerance: Vec<JointTolerance>,
            component_path_tolerance: Vec<JointComponentTolerance>,
            goal_tolerance: Vec<JointTolerance>,
            component_goal_tolerance: Vec<JointComponentTolerance>,
            goal_time_tolerance: Duration,
        }
        result { error_code: i32, error_string: String }
        feedback {
            header: Header,
            joint_names: Vec<String>,
            desired: JointTrajectoryPoint,
            actual: JointTrajectoryPoint,
            error: JointTrajectoryPoint,
            multi_dof_joint_names: Vec<String>,
            multi_dof_desired: MultiDOFJointTrajectoryPoint,
            multi_dof_actual: MultiDOFJointTrajectoryPoint,
            multi_dof_error: MultiDOFJointTrajectoryPoint,
        }
    } }

    impl FollowJointTrajectory::Result {
        pub const SUCCESSFUL: i32 = 0;
        pub const INVALID_GOAL: i32 = -1;
        pub const INVALID_JOINTS: i32 = -2;
        pub const OLD_HEADER_TIMESTAMP: i32 = -3;
        pub const PATH_TOLERANCE_VIOLATED: i32 = -4;
        pub const GOAL_TOLERANCE_VIOLATED: i32 = -5;
    }

    super::super::action! { "control_msgs", GripperCommand {
        goal { command: GripperCommandMsg }
        result { position: f64, effort: f64, stalled: bool, reached_goal: bool }
        feedback { position: f64, effort: f64, stalled: bool, reached_goal: bool }
    } }

    super::super::action! { "control_msgs", ParallelGripperCommand {
        goal { command: JointState }
        result { state: JointState, stalled: bool, reached_goal: bool }
        feedback { state: JointState }
    } }
}
