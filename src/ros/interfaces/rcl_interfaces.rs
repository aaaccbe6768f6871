pub mod msg {
    use super::super::builtin_interfaces::msg::Time;
    super::super::structs! { "rcl_interfaces", "msg";
        Log {
            stamp: Time,
            level: u8,
            name: String,
            msg: String,
            file: String,
            function: String,
            line: u32,
        }
    }

    impl Log {
        pub const DEBUG: u8 = 10;
        pub const INFO: u8 = 20;
        pub const WARN: u8 = 30;
        pub const ERROR: u8 = 40;
        pub const FATAL: u8 = 50;
    }
}
