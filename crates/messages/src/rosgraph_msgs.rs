pub mod msg {
    use super::super::builtin_interfaces::msg::Time;
    super::super::structs! { "rosgraph_msgs", "msg";
        Clock { clock: Time }
    }
}
