pub mod msg {
    use super::super::geometry_msgs::msg::TransformStamped;
    super::super::structs! { "tf2_msgs", "msg";
        TFMessage { transforms: Vec<TransformStamped> }
    }
}
