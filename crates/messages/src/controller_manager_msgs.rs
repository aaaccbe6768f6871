pub mod msg {
    use super::super::lifecycle_msgs::msg::State;
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "controller_manager_msgs", "msg";
        ChainConnection { name: String, reference_interfaces: Vec<String> }
        NamedLifecycleState { name: String, state: State }
        ControllerManagerActivity {
            header: Header,
            controllers: Vec<NamedLifecycleState>,
            hardware_components: Vec<NamedLifecycleState>,
        }
        ControllerState {
            name: String,
            state: String,
            #[serde(rename = "type")]
            type_: String,
            is_async: bool,
            update_rate: u16,
            claimed_interfaces: Vec<String>,
            required_command_interfaces: Vec<String>,
            required_state_interfaces: Vec<String>,
            is_chainable: bool,
            is_chained: bool,
            exported_state_interfaces: Vec<String>,
            reference_interfaces: Vec<String>,
            chain_connections: Vec<ChainConnection>,
        }
        HardwareInterface { name: String, data_type: String, is_available: bool, is_claimed: bool }
        HardwareComponentState {
            name: String,
            #[serde(rename = "type")]
            type_: String,
            is_async: bool,
            rw_rate: u16,
            class_type: String,
            plugin_name: String,
            state: State,
            command_interfaces: Vec<HardwareInterface>,
            state_interfaces: Vec<HardwareInterface>,
        }
    }
}

pub mod srv {
    use super::super::builtin_interfaces::msg::Duration;
    use super::super::lifecycle_msgs::msg::State;
    use super::msg::{ControllerState, HardwareComponentState, HardwareInterface};

    super::super::service! { "controller_manager_msgs", ListControllers {
        request { structure_needs_at_least_one_member: u8 }
        response { controller: Vec<ControllerState> }
    } }
    super::super::service! { "controller_manager_msgs", ListControllerTypes {
        request { structure_needs_at_least_one_member: u8 }
        response { types: Vec<String>, base_classes: Vec<String> }
    } }
    super::super::service! { "controller_manager_msgs", ListHardwareComponents {
        request { structure_needs_at_least_one_member: u8 }
        response { component: Vec<HardwareComponentState> }
    } }
    super::super::service! { "controller_manager_msgs", ListHardwareInterfaces {
        request { structure_needs_at_least_one_member: u8 }
        response { command_interfaces: Vec<HardwareInterface>, state_interfaces: Vec<HardwareInterface> }
    } }
    super::super::service! { "controller_manager_msgs", LoadController {
        request { name: String }
        response { ok: bool }
    } }
    super::super::service! { "controller_manager_msgs", ConfigureController {
        request { name: String }
        response { ok: bool }
    } }
    super::super::service! { "controller_manager_msgs", CleanupController {
        request { name: String }
        response { ok: bool }
    } }
    super::super::service! { "controller_manager_msgs", UnloadController {
        request { name: String }
        response { ok: bool }
    } }
    super::super::service! { "controller_manager_msgs", ReloadControllerLibraries {
        request { force_kill: bool }
        response { ok: bool }
    } }
    super::super::service! { "controller_manager_msgs", SetHardwareComponentState {
        request { name: String, target_state: State }
        response { ok: bool, state: State }
    } }
    super::super::service! { "controller_manager_msgs", SwitchController {
        request {
            activate_controllers: Vec<String>,
            deactivate_controllers: Vec<String>,
            strictness: i32,
            activate_asap: bool,
            timeout: Duration,
        }
        response { ok: bool, message: String }
    } }

    impl SwitchController::Request {
        pub const BEST_EFFORT: i32 = 1;
        pub const STRICT: i32 = 2;
        pub const AUTO: i32 = 3;
        pub const FORCE_AUTO: i32 = 4;
    }
}
