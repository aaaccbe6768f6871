pub mod msg {
    use super::super::geometry_msgs::msg::{PoseWithCovariance, TwistWithCovariance};
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "nav_msgs", "msg";
        Odometry {
            header: Header,
            child_frame_id: String,
            pose: PoseWithCovariance,
            twist: TwistWithCovariance,
        }
    }
}
