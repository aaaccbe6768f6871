pub mod msg {
    super::super::structs! { "builtin_interfaces", "msg";
        Time { sec: i32, nanosec: u32 }
        Duration { sec: i32, nanosec: u32 }
    }
}
