//! The r2r generated type of each service and action the node serves. Requests, responses,
//! goals, feedback and results cross between these and the shared structs as CDR bytes.
use crate::messages::{Action, Service};
use crate::messages::{
    control_msgs, controller_manager_msgs, rcl_interfaces, simulation_interfaces, std_srvs,
};

/// A service the node can serve on rcl.
pub trait ServiceType: Service {
    type Native: r2r::WrappedServiceTypeSupport + 'static;
}

/// An action the node can serve on rcl.
pub trait ActionType: Action {
    type Native: r2r::WrappedActionTypeSupport + 'static;
}

macro_rules! native {
    ($trait:ident: $($ours:ty => $native:ty),* $(,)?) => {
        $(impl $trait for $ours {
            type Native = $native;
        })*
    };
}

native! { ServiceType:
    std_srvs::srv::Trigger::Service => r2r::std_srvs::srv::Trigger::Service,
    std_srvs::srv::SetBool::Service => r2r::std_srvs::srv::SetBool::Service,
    simulation_interfaces::srv::GetEntities::Service =>
        r2r::simulation_interfaces::srv::GetEntities::Service,
    simulation_interfaces::srv::GetEntitiesStates::Service =>
        r2r::simulation_interfaces::srv::GetEntitiesStates::Service,
    simulation_interfaces::srv::GetEntityState::Service =>
        r2r::simulation_interfaces::srv::GetEntityState::Service,
    simulation_interfaces::srv::SetEntityState::Service =>
        r2r::simulation_interfaces::srv::SetEntityState::Service,
    simulation_interfaces::srv::GetSimulationState::Service =>
        r2r::simulation_interfaces::srv::GetSimulationState::Service,
    simulation_interfaces::srv::SetSimulationState::Service =>
        r2r::simulation_interfaces::srv::SetSimulationState::Service,
    simulation_interfaces::srv::GetSimulatorFeatures::Service =>
        r2r::simulation_interfaces::srv::GetSimulatorFeatures::Service,
    simulation_interfaces::srv::ResetSimulation::Service =>
        r2r::simulation_interfaces::srv::ResetSimulation::Service,
    simulation_interfaces::srv::StepSimulation::Service =>
        r2r::simulation_interfaces::srv::StepSimulation::Service,
    simulation_interfaces::srv::SpawnEntity::Service =>
        r2r::simulation_interfaces::srv::SpawnEntity::Service,
    simulation_interfaces::srv::SpawnEntities::Service =>
        r2r::simulation_interfaces::srv::SpawnEntities::Service,
    simulation_interfaces::srv::DeleteEntity::Service =>
        r2r::simulation_interfaces::srv::DeleteEntity::Service,
    simulation_interfaces::srv::GetAvailableWorlds::Service =>
        r2r::simulation_interfaces::srv::GetAvailableWorlds::Service,
    simulation_interfaces::srv::LoadWorld::Service =>
        r2r::simulation_interfaces::srv::LoadWorld::Service,
    simulation_interfaces::srv::GetCurrentWorld::Service =>
        r2r::simulation_interfaces::srv::GetCurrentWorld::Service,
    simulation_interfaces::srv::GetSpawnables::Service =>
        r2r::simulation_interfaces::srv::GetSpawnables::Service,
    simulation_interfaces::srv::UnloadWorld::Service =>
        r2r::simulation_interfaces::srv::UnloadWorld::Service,
    simulation_interfaces::srv::GetEntityInfo::Service =>
        r2r::simulation_interfaces::srv::GetEntityInfo::Service,
    simulation_interfaces::srv::SetEntityInfo::Service =>
        r2r::simulation_interfaces::srv::SetEntityInfo::Service,
    simulation_interfaces::srv::GetEntityBounds::Service =>
        r2r::simulation_interfaces::srv::GetEntityBounds::Service,
    simulation_interfaces::srv::GetNamedPoses::Service =>
        r2r::simulation_interfaces::srv::GetNamedPoses::Service,
    simulation_interfaces::srv::GetNamedPoseBounds::Service =>
        r2r::simulation_interfaces::srv::GetNamedPoseBounds::Service,
    controller_manager_msgs::srv::ListControllers::Service =>
        r2r::controller_manager_msgs::srv::ListControllers::Service,
    controller_manager_msgs::srv::ListControllerTypes::Service =>
        r2r::controller_manager_msgs::srv::ListControllerTypes::Service,
    controller_manager_msgs::srv::ListHardwareComponents::Service =>
        r2r::controller_manager_msgs::srv::ListHardwareComponents::Service,
    controller_manager_msgs::srv::ListHardwareInterfaces::Service =>
        r2r::controller_manager_msgs::srv::ListHardwareInterfaces::Service,
    controller_manager_msgs::srv::LoadController::Service =>
        r2r::controller_manager_msgs::srv::LoadController::Service,
    controller_manager_msgs::srv::ConfigureController::Service =>
        r2r::controller_manager_msgs::srv::ConfigureController::Service,
    controller_manager_msgs::srv::CleanupController::Service =>
        r2r::controller_manager_msgs::srv::CleanupController::Service,
    controller_manager_msgs::srv::UnloadController::Service =>
        r2r::controller_manager_msgs::srv::UnloadController::Service,
    controller_manager_msgs::srv::ReloadControllerLibraries::Service =>
        r2r::controller_manager_msgs::srv::ReloadControllerLibraries::Service,
    controller_manager_msgs::srv::SetHardwareComponentState::Service =>
        r2r::controller_manager_msgs::srv::SetHardwareComponentState::Service,
    controller_manager_msgs::srv::SwitchController::Service =>
        r2r::controller_manager_msgs::srv::SwitchController::Service,
    rcl_interfaces::srv::ListParameters::Service =>
        r2r::rcl_interfaces::srv::ListParameters::Service,
    rcl_interfaces::srv::GetParameters::Service =>
        r2r::rcl_interfaces::srv::GetParameters::Service,
    rcl_interfaces::srv::GetParameterTypes::Service =>
        r2r::rcl_interfaces::srv::GetParameterTypes::Service,
    rcl_interfaces::srv::SetParameters::Service =>
        r2r::rcl_interfaces::srv::SetParameters::Service,
    rcl_interfaces::srv::SetParametersAtomically::Service =>
        r2r::rcl_interfaces::srv::SetParametersAtomically::Service,
    rcl_interfaces::srv::DescribeParameters::Service =>
        r2r::rcl_interfaces::srv::DescribeParameters::Service,
}

native! { ActionType:
    control_msgs::action::FollowJointTrajectory::Action =>
        r2r::control_msgs::action::FollowJointTrajectory::Action,
    control_msgs::action::GripperCommand::Action =>
        r2r::control_msgs::action::GripperCommand::Action,
    control_msgs::action::ParallelGripperCommand::Action =>
        r2r::control_msgs::action::ParallelGripperCommand::Action,
    simulation_interfaces::action::SimulateSteps::Action =>
        r2r::simulation_interfaces::action::SimulateSteps::Action,
}

#[cfg(test)]
mod tests {
    use crate::messages::sample::sample;
    use crate::messages::*;
    use r2r::WrappedTypesupport;

    /// Fields and values as JSON; rosidl's placeholder member of an empty structure is
    /// on the wire only, so it is left out.
    fn fields(value: &impl serde::Serialize) -> String {
        let json = serde_json::to_string(value).unwrap();
        json.replace("\"structure_needs_at_least_one_member\":1", "")
            .replace("\"structure_needs_at_least_one_member\":0", "")
    }

    /// A sample of our struct, through CDR into r2r's generated type (rosidl's
    /// definition): both must serialize to the same fields, names, order and values.
    fn agree<Ours: Message, Native: WrappedTypesupport>() {
        agree_on::<Ours, Native>(sample());
    }

    /// `agree` on a given value (for types with bounded sequences, which the sample
    /// overfills).
    fn agree_on<Ours: Message, Native: WrappedTypesupport>(ours: Ours) {
        let bytes = cdr::encode(&ours).unwrap();
        let native = Native::from_serialized_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: rosidl refused our CDR: {e}", Ours::ros_type()));
        assert_eq!(fields(&native), fields(&ours), "{}", Ours::ros_type());
        let back: Ours = cdr::decode(&native.to_serialized_bytes().unwrap()).unwrap();
        assert_eq!(
            fields(&back),
            fields(&ours),
            "{}: back from rosidl's CDR",
            Ours::ros_type()
        );
    }

    macro_rules! agree {
        ($($package:ident :: $kind:ident :: $($name:ident)::+),* $(,)?) => {$(
            agree::<$package::$kind::$($name)::+, r2r::$package::$kind::$($name)::+>();
        )*};
    }

    /// ParameterDescriptor holds at most one range of each kind.
    #[test]
    fn parameter_descriptors_match_rosidl() {
        use rcl_interfaces::msg::ParameterDescriptor;
        let mut descriptor: ParameterDescriptor = sample();
        descriptor.floating_point_range.truncate(1);
        descriptor.integer_range.truncate(1);
        agree_on::<ParameterDescriptor, r2r::rcl_interfaces::msg::ParameterDescriptor>(
            descriptor.clone(),
        );
        agree_on::<
            rcl_interfaces::srv::DescribeParameters::Response,
            r2r::rcl_interfaces::srv::DescribeParameters::Response,
        >(rcl_interfaces::srv::DescribeParameters::Response {
            descriptors: vec![descriptor.clone(), descriptor],
        });
    }

    #[test]
    fn every_interface_matches_rosidl() {
        agree! {
            builtin_interfaces::msg::Time,
            builtin_interfaces::msg::Duration,
            rosgraph_msgs::msg::Clock,
            std_msgs::msg::Header,
            std_msgs::msg::String,
            std_msgs::msg::Bool,
            std_msgs::msg::UInt32,
            std_msgs::msg::ColorRGBA,
            std_msgs::msg::Float64MultiArray,
            geometry_msgs::msg::Vector3,
            geometry_msgs::msg::Point,
            geometry_msgs::msg::Quaternion,
            geometry_msgs::msg::Pose,
            geometry_msgs::msg::Transform,
            geometry_msgs::msg::TransformStamped,
            geometry_msgs::msg::Twist,
            geometry_msgs::msg::TwistStamped,
            geometry_msgs::msg::Accel,
            geometry_msgs::msg::Wrench,
            geometry_msgs::msg::WrenchStamped,
            geometry_msgs::msg::PoseWithCovariance,
            geometry_msgs::msg::TwistWithCovariance,
            sensor_msgs::msg::JointState,
            sensor_msgs::msg::Imu,
            sensor_msgs::msg::MagneticField,
            sensor_msgs::msg::NavSatFix,
            sensor_msgs::msg::FluidPressure,
            geometry_msgs::msg::TwistWithCovarianceStamped,
            ros_gz_interfaces::msg::Altimeter,
            ros_gz_interfaces::msg::Entity,
            ros_gz_interfaces::msg::JointWrench,
            ros_gz_interfaces::msg::Contact,
            ros_gz_interfaces::msg::Contacts,
            vision_msgs::msg::Point2D,
            vision_msgs::msg::Pose2D,
            vision_msgs::msg::BoundingBox2D,
            vision_msgs::msg::ObjectHypothesis,
            vision_msgs::msg::ObjectHypothesisWithPose,
            vision_msgs::msg::Detection2D,
            vision_msgs::msg::Detection2DArray,
            vision_msgs::msg::VisionClass,
            vision_msgs::msg::LabelInfo,
            sensor_msgs::msg::LaserScan,
            sensor_msgs::msg::Range,
            sensor_msgs::msg::CompressedImage,
            nav_msgs::msg::Odometry,
            tf2_msgs::msg::TFMessage,
            rcl_interfaces::msg::Log,
            rcl_interfaces::msg::ParameterValue,
            rcl_interfaces::msg::Parameter,
            rcl_interfaces::msg::SetParametersResult,
            rcl_interfaces::msg::ListParametersResult,
            rcl_interfaces::msg::ParameterEvent,
            rcl_interfaces::srv::ListParameters::Request,
            rcl_interfaces::srv::ListParameters::Response,
            rcl_interfaces::srv::GetParameters::Request,
            rcl_interfaces::srv::GetParameters::Response,
            rcl_interfaces::srv::GetParameterTypes::Request,
            rcl_interfaces::srv::GetParameterTypes::Response,
            rcl_interfaces::srv::SetParameters::Request,
            rcl_interfaces::srv::SetParameters::Response,
            rcl_interfaces::srv::SetParametersAtomically::Request,
            rcl_interfaces::srv::SetParametersAtomically::Response,
            rcl_interfaces::srv::DescribeParameters::Request,
            diagnostic_msgs::msg::DiagnosticArray,
            trajectory_msgs::msg::JointTrajectory,
            trajectory_msgs::msg::MultiDOFJointTrajectory,
            visualization_msgs::msg::Marker,
            visualization_msgs::msg::MarkerArray,
            control_msgs::msg::InterfaceValue,
            control_msgs::msg::DynamicJointState,
            control_msgs::msg::JointTrajectoryControllerState,
            control_msgs::msg::JointTolerance,
            control_msgs::msg::JointComponentTolerance,
            control_msgs::msg::GripperCommand,
            control_msgs::action::FollowJointTrajectory::Goal,
            control_msgs::action::FollowJointTrajectory::Result,
            control_msgs::action::FollowJointTrajectory::Feedback,
            control_msgs::action::GripperCommand::Goal,
            control_msgs::action::GripperCommand::Result,
            control_msgs::action::GripperCommand::Feedback,
            control_msgs::action::ParallelGripperCommand::Goal,
            control_msgs::action::ParallelGripperCommand::Result,
            control_msgs::action::ParallelGripperCommand::Feedback,
            simulation_interfaces::action::SimulateSteps::Goal,
            simulation_interfaces::action::SimulateSteps::Result,
            simulation_interfaces::action::SimulateSteps::Feedback,
            simulation_interfaces::msg::NamedPose,
            simulation_interfaces::msg::EntityInfo,
            simulation_interfaces::msg::SpawnEntity,
            simulation_interfaces::msg::WorldResource,
            lifecycle_msgs::msg::State,
            controller_manager_msgs::msg::ChainConnection,
            controller_manager_msgs::msg::NamedLifecycleState,
            controller_manager_msgs::msg::ControllerManagerActivity,
            controller_manager_msgs::msg::ControllerState,
            controller_manager_msgs::msg::HardwareInterface,
            controller_manager_msgs::msg::HardwareComponentState,
            controller_manager_msgs::srv::ListControllers::Request,
            controller_manager_msgs::srv::ListControllers::Response,
            controller_manager_msgs::srv::ListControllerTypes::Request,
            controller_manager_msgs::srv::ListControllerTypes::Response,
            controller_manager_msgs::srv::ListHardwareComponents::Request,
            controller_manager_msgs::srv::ListHardwareComponents::Response,
            controller_manager_msgs::srv::ListHardwareInterfaces::Request,
            controller_manager_msgs::srv::ListHardwareInterfaces::Response,
            controller_manager_msgs::srv::LoadController::Request,
            controller_manager_msgs::srv::LoadController::Response,
            controller_manager_msgs::srv::ConfigureController::Request,
            controller_manager_msgs::srv::ConfigureController::Response,
            controller_manager_msgs::srv::CleanupController::Request,
            controller_manager_msgs::srv::CleanupController::Response,
            controller_manager_msgs::srv::UnloadController::Request,
            controller_manager_msgs::srv::UnloadController::Response,
            controller_manager_msgs::srv::ReloadControllerLibraries::Request,
            controller_manager_msgs::srv::ReloadControllerLibraries::Response,
            controller_manager_msgs::srv::SetHardwareComponentState::Request,
            controller_manager_msgs::srv::SetHardwareComponentState::Response,
            controller_manager_msgs::srv::SwitchController::Request,
            controller_manager_msgs::srv::SwitchController::Response,
            std_srvs::srv::Trigger::Request,
            std_srvs::srv::Trigger::Response,
            std_srvs::srv::SetBool::Request,
            std_srvs::srv::SetBool::Response,
            simulation_interfaces::msg::EntityFilters,
            simulation_interfaces::msg::EntityState,
            simulation_interfaces::msg::SimulatorFeatures,
            simulation_interfaces::srv::GetEntities::Request,
            simulation_interfaces::srv::GetEntities::Response,
            simulation_interfaces::srv::GetEntitiesStates::Request,
            simulation_interfaces::srv::GetEntitiesStates::Response,
            simulation_interfaces::srv::GetEntityState::Request,
            simulation_interfaces::srv::GetEntityState::Response,
            simulation_interfaces::srv::SetEntityState::Request,
            simulation_interfaces::srv::SetEntityState::Response,
            simulation_interfaces::srv::GetSimulationState::Request,
            simulation_interfaces::srv::GetSimulationState::Response,
            simulation_interfaces::srv::SetSimulationState::Request,
            simulation_interfaces::srv::SetSimulationState::Response,
            simulation_interfaces::srv::GetSimulatorFeatures::Request,
            simulation_interfaces::srv::GetSimulatorFeatures::Response,
            simulation_interfaces::srv::ResetSimulation::Request,
            simulation_interfaces::srv::ResetSimulation::Response,
            simulation_interfaces::srv::StepSimulation::Request,
            simulation_interfaces::srv::StepSimulation::Response,
            simulation_interfaces::srv::SpawnEntity::Request,
            simulation_interfaces::srv::SpawnEntity::Response,
            simulation_interfaces::srv::SpawnEntities::Request,
            simulation_interfaces::srv::SpawnEntities::Response,
            simulation_interfaces::srv::DeleteEntity::Request,
            simulation_interfaces::srv::DeleteEntity::Response,
            simulation_interfaces::srv::GetAvailableWorlds::Request,
            simulation_interfaces::srv::GetAvailableWorlds::Response,
            simulation_interfaces::srv::LoadWorld::Request,
            simulation_interfaces::srv::LoadWorld::Response,
            simulation_interfaces::srv::GetCurrentWorld::Request,
            simulation_interfaces::srv::GetCurrentWorld::Response,
            simulation_interfaces::srv::GetSpawnables::Request,
            simulation_interfaces::srv::GetSpawnables::Response,
            simulation_interfaces::srv::UnloadWorld::Request,
            simulation_interfaces::srv::UnloadWorld::Response,
            simulation_interfaces::srv::GetEntityInfo::Request,
            simulation_interfaces::srv::GetEntityInfo::Response,
            simulation_interfaces::srv::SetEntityInfo::Request,
            simulation_interfaces::srv::SetEntityInfo::Response,
            simulation_interfaces::srv::GetEntityBounds::Request,
            simulation_interfaces::srv::GetEntityBounds::Response,
            simulation_interfaces::srv::GetNamedPoses::Request,
            simulation_interfaces::srv::GetNamedPoses::Response,
            simulation_interfaces::srv::GetNamedPoseBounds::Request,
            simulation_interfaces::srv::GetNamedPoseBounds::Response,
        }
    }
}
