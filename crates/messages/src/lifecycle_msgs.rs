pub mod msg {
    super::super::structs! { "lifecycle_msgs", "msg";
        State { id: u8, label: String }
    }

    impl State {
        pub const PRIMARY_STATE_UNKNOWN: u8 = 0;
        pub const PRIMARY_STATE_UNCONFIGURED: u8 = 1;
        pub const PRIMARY_STATE_INACTIVE: u8 = 2;
        pub const PRIMARY_STATE_ACTIVE: u8 = 3;
        pub const PRIMARY_STATE_FINALIZED: u8 = 4;
    }
}
