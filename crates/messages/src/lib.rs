//! The ROS 2 message, service and action types mujoco_bridge speaks, defined once for every
//! sink (both ROS 2 backends, the Foxglove server, MCAP): plain serde structs whose fields are in the exact order of the ROS interface
//! definitions, because CDR, the wire format, is that order and nothing else. The module
//! paths follow ROS (`sensor_msgs::msg::JointState`, `std_srvs::srv::Trigger::Request`,
//! `control_msgs::action::FollowJointTrajectory::Goal`).
//!
//! Where an interface has a default value (`geometry_msgs/Quaternion.w = 1`), `Default`
//! gives it, as rosidl does.
#![allow(non_snake_case)]

pub mod cdr;
pub mod definition;
mod from_nalgebra;
#[cfg(any(test, feature = "sample"))]
pub mod sample;

/// A ROS interface type with its name: `sensor_msgs/msg/JointState` is
/// `PACKAGE = "sensor_msgs"`, `KIND = "msg"`, `NAME = "JointState"`.
pub trait Message:
    serde::Serialize
    + serde::de::DeserializeOwned
    + Clone
    + Default
    + Send
    + definition::FieldType
    + 'static
{
    const PACKAGE: &'static str;
    const KIND: &'static str;
    const NAME: &'static str;

    /// Its name in parts, as publishers made for serialized messages take it.
    fn type_name() -> TypeName {
        TypeName {
            package: Self::PACKAGE,
            kind: Self::KIND,
            name: Self::NAME,
        }
    }

    /// The name ROS tools use: `sensor_msgs/msg/JointState`.
    fn ros_type() -> String {
        Self::type_name().ros()
    }

    /// The DDS type name under which ROS 2 middlewares announce it:
    /// `sensor_msgs::msg::dds_::JointState_`.
    fn dds_type() -> String {
        format!("{}::{}::dds_::{}_", Self::PACKAGE, Self::KIND, Self::NAME)
    }
}

/// A message type's name in parts: `sensor_msgs`, `msg`, `JointState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeName {
    pub package: &'static str,
    pub kind: &'static str,
    pub name: &'static str,
}

impl TypeName {
    /// The name ROS tools use: `sensor_msgs/msg/JointState`.
    pub fn ros(&self) -> String {
        format!("{}/{}/{}", self.package, self.kind, self.name)
    }
}

/// A ROS service: `std_srvs/srv/Trigger`.
pub trait Service: 'static {
    type Request: Message;
    type Response: Message;
    const PACKAGE: &'static str;
    const NAME: &'static str;
}

/// A ROS action: `control_msgs/action/FollowJointTrajectory`.
pub trait Action: 'static {
    type Goal: Message;
    type Result: Message;
    type Feedback: Message;
    const PACKAGE: &'static str;
    const NAME: &'static str;
}

/// The first of its arguments: a given type name, else the struct's own.
macro_rules! first {
    ($first:expr $(, $rest:expr)*) => {
        $first
    };
}
pub(crate) use first;

/// Declares message structs of one package and kind, with their names (the struct's name
/// unless `("Name")` gives another, as services and actions need).
macro_rules! structs {
    ($package:literal, $kind:literal;
     $( $(#[$meta:meta])* $name:ident $(($type_name:expr))? {
         $( $(#[$field_meta:meta])* $field:ident : $ty:ty ),* $(,)?
     } )*) => { $(
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $name { $( $(#[$field_meta])* pub $field: $ty, )* }

        impl $crate::Message for $name {
            const PACKAGE: &'static str = $package;
            const KIND: &'static str = $kind;
            const NAME: &'static str =
                $crate::first!($($type_name,)? stringify!($name));
        }

        impl $crate::definition::FieldType for $name {
            fn field_type() -> std::string::String {
                format!("{}/{}", $package, <Self as $crate::Message>::NAME)
            }
            fn collect(out: &mut std::vec::Vec<$crate::definition::Definition>) {
                $crate::definition::collect_message(
                    out,
                    <Self as $crate::definition::FieldType>::field_type(),
                    &[$( (
                        <$ty as $crate::definition::FieldType>::field_type(),
                        stringify!($field),
                        <$ty as $crate::definition::FieldType>::collect,
                    ) ),*],
                );
            }
        }
    )* };
}
pub(crate) use structs;

/// Declares an action: a module named after it with `Goal`, `Result`, `Feedback` and
/// `Action`.
macro_rules! action {
    ($package:literal, $action:ident {
        goal { $( $goal:ident : $goal_ty:ty ),* $(,)? }
        result { $( $result:ident : $result_ty:ty ),* $(,)? }
        feedback { $( $feedback:ident : $feedback_ty:ty ),* $(,)? }
    }) => {
        pub mod $action {
            #[allow(unused_imports)]
            use super::*;
            $crate::structs! { $package, "action";
                Goal(concat!(stringify!($action), "_Goal")) { $( $goal : $goal_ty ),* }
                Result(concat!(stringify!($action), "_Result")) { $( $result : $result_ty ),* }
                Feedback(concat!(stringify!($action), "_Feedback")) {
                    $( $feedback : $feedback_ty ),*
                }
            }
            pub struct Action;
            impl $crate::Action for Action {
                type Goal = Goal;
                type Result = Result;
                type Feedback = Feedback;
                const PACKAGE: &'static str = $package;
                const NAME: &'static str = stringify!($action);
            }
        }
    };
}
pub(crate) use action;

/// Declares a service: a module named after it with `Request`, `Response` and `Service`.
/// An empty request carries the one byte rosidl gives every empty structure.
macro_rules! service {
    ($package:literal, $service:ident {
        request { $( $(#[$req_meta:meta])* $req:ident : $req_ty:ty ),* $(,)? }
        response { $( $res:ident : $res_ty:ty ),* $(,)? }
    }) => {
        pub mod $service {
            #[allow(unused_imports)]
            use super::*;
            $crate::structs! { $package, "srv";
                Request(concat!(stringify!($service), "_Request")) {
                    $( $(#[$req_meta])* $req : $req_ty ),*
                }
                Response(concat!(stringify!($service), "_Response")) { $( $res : $res_ty ),* }
            }
            pub struct Service;
            impl $crate::Service for Service {
                type Request = Request;
                type Response = Response;
                const PACKAGE: &'static str = $package;
                const NAME: &'static str = stringify!($service);
            }
        }
    };
}
pub(crate) use service;

pub mod builtin_interfaces;
pub mod control_msgs;
pub mod controller_manager_msgs;
pub mod diagnostic_msgs;
pub mod geometry_msgs;
pub mod lifecycle_msgs;
pub mod mujoco_bridge_msgs;
pub mod nav_msgs;
pub mod rcl_interfaces;
pub mod ros_gz_interfaces;
pub mod rosgraph_msgs;
pub mod sensor_msgs;
pub mod simulation_interfaces;
pub mod std_msgs;
pub mod std_srvs;
pub mod tf2_msgs;
pub mod trajectory_msgs;
pub mod vision_msgs;
pub mod visualization_msgs;
