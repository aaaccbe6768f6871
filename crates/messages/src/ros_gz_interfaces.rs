pub mod msg {
    use super::super::geometry_msgs::msg::{Vector3, Wrench};
    use super::super::std_msgs::msg::{Header, String as RosString, UInt32};
    super::super::structs! { "ros_gz_interfaces", "msg";
        Altimeter {
            header: Header,
            vertical_position: f64,
            vertical_velocity: f64,
            vertical_reference: f64,
        }
        Entity {
            id: u64,
            name: std::string::String,
            #[serde(rename = "type")]
            type_: u8,
        }
        JointWrench {
            header: Header,
            body_1_name: RosString,
            body_1_id: UInt32,
            body_2_name: RosString,
            body_2_id: UInt32,
            body_1_wrench: Wrench,
            body_2_wrench: Wrench,
        }
        Contact {
            collision1: Entity,
            collision2: Entity,
            positions: Vec<Vector3>,
            normals: Vec<Vector3>,
            depths: Vec<f64>,
            wrenches: Vec<JointWrench>,
        }
        Contacts { header: Header, contacts: Vec<Contact> }
    }

    impl Entity {
        /// ros_gz_interfaces/Entity's type of a collision shape.
        pub const COLLISION: u8 = 5;
    }
}
