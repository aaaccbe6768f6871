pub mod msg {
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "diagnostic_msgs", "msg";
        KeyValue { key: String, value: String }
        DiagnosticStatus {
            level: u8,
            name: String,
            message: String,
            hardware_id: String,
            values: Vec<KeyValue>,
        }
        DiagnosticArray { header: Header, status: Vec<DiagnosticStatus> }
    }

    impl DiagnosticStatus {
        pub const OK: u8 = 0;
        pub const WARN: u8 = 1;
        pub const ERROR: u8 = 2;
        pub const STALE: u8 = 3;
    }
}
