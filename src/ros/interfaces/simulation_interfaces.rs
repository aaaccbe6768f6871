pub mod msg {
    use super::super::geometry_msgs::msg::{Accel, Pose, Twist, Vector3};
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "simulation_interfaces", "msg";
        Bounds {
            #[serde(rename = "type")]
            type_: u8,
            points: Vec<Vector3>,
        }
        EntityCategory { category: u8 }
        TagsFilter { tags: Vec<String>, filter_mode: u8 }
        EntityFilters {
            filter: String,
            categories: Vec<EntityCategory>,
            tags: TagsFilter,
            bounds: Bounds,
        }
        EntityState { header: Header, pose: Pose, twist: Twist, acceleration: Accel }
        Result { result: u8, error_message: String }
        SimulationState { state: u8 }
        SimulatorFeatures { features: Vec<u16>, spawn_formats: Vec<String>, custom_info: String }
    }

    impl Bounds {
        pub const TYPE_EMPTY: u8 = 0;
        pub const TYPE_BOX: u8 = 1;
        pub const TYPE_CONVEX_HULL: u8 = 2;
        pub const TYPE_SPHERE: u8 = 3;
    }

    impl EntityCategory {
        pub const CATEGORY_OBJECT: u8 = 0;
        pub const CATEGORY_ROBOT: u8 = 1;
        pub const CATEGORY_HUMAN: u8 = 2;
        pub const CATEGORY_DYNAMIC_OBJECT: u8 = 4;
        pub const CATEGORY_STATIC_OBJECT: u8 = 5;
    }

    impl Result {
        pub const RESULT_FEATURE_UNSUPPORTED: u8 = 0;
        pub const RESULT_OK: u8 = 1;
        pub const RESULT_NOT_FOUND: u8 = 2;
        pub const RESULT_INCORRECT_STATE: u8 = 3;
        pub const RESULT_OPERATION_FAILED: u8 = 4;
    }

    impl SimulationState {
        pub const STATE_STOPPED: u8 = 0;
        pub const STATE_PLAYING: u8 = 1;
        pub const STATE_PAUSED: u8 = 2;
        pub const STATE_QUITTING: u8 = 3;
        pub const STATE_NO_WORLD: u8 = 4;
        pub const STATE_LOADING_WORLD: u8 = 5;
    }

    impl SimulatorFeatures {
        pub const SPAWNING: u16 = 0;
        pub const DELETING: u16 = 1;
        pub const NAMED_POSES: u16 = 2;
        pub const POSE_BOUNDS: u16 = 3;
        pub const ENTITY_TAGS: u16 = 4;
        pub const ENTITY_BOUNDS: u16 = 5;
        pub const ENTITY_BOUNDS_BOX: u16 = 6;
        pub const ENTITY_BOUNDS_CONVEX: u16 = 7;
        pub const ENTITY_CATEGORIES: u16 = 8;
        pub const SPAWNING_RESOURCE_STRING: u16 = 9;
        pub const ENTITY_STATE_GETTING: u16 = 10;
        pub const ENTITY_STATE_SETTING: u16 = 11;
        pub const ENTITY_INFO_GETTING: u16 = 12;
        pub const ENTITY_INFO_SETTING: u16 = 13;
        pub const SPAWNABLES: u16 = 14;
        pub const SIMULATION_RESET: u16 = 20;
        pub const SIMULATION_RESET_TIME: u16 = 21;
        pub const SIMULATION_RESET_STATE: u16 = 22;
        pub const SIMULATION_RESET_SPAWNED: u16 = 23;
        pub const SIMULATION_STATE_GETTING: u16 = 24;
        pub const SIMULATION_STATE_SETTING: u16 = 25;
        pub const SIMULATION_STATE_PAUSE: u16 = 26;
        pub const STEP_SIMULATION_SINGLE: u16 = 31;
        pub const STEP_SIMULATION_MULTIPLE: u16 = 32;
        pub const STEP_SIMULATION_ACTION: u16 = 33;
    }
}

pub mod srv {
    use super::msg::{EntityFilters, EntityState, Result, SimulationState, SimulatorFeatures};

    super::super::service! { "simulation_interfaces", GetEntities {
        request { filters: EntityFilters }
        response { result: Result, entities: Vec<String> }
    } }
    super::super::service! { "simulation_interfaces", GetEntityState {
        request { entity: String }
        response { result: Result, state: EntityState }
    } }
    super::super::service! { "simulation_interfaces", SetEntityState {
        request { entity: String, state: EntityState }
        response { result: Result }
    } }
    super::super::service! { "simulation_interfaces", GetSimulationState {
        request { structure_needs_at_least_one_member: u8 }
        response { state: SimulationState, result: Result }
    } }
    super::super::service! { "simulation_interfaces", SetSimulationState {
        request { state: SimulationState }
        response { result: Result }
    } }
    super::super::service! { "simulation_interfaces", GetSimulatorFeatures {
        request { structure_needs_at_least_one_member: u8 }
        response { features: SimulatorFeatures }
    } }
    super::super::service! { "simulation_interfaces", ResetSimulation {
        request { scope: u8 }
        response { result: Result }
    } }
    super::super::service! { "simulation_interfaces", StepSimulation {
        request { steps: u64 }
        response { result: Result }
    } }

    impl SetEntityState::Response {
        pub const INVALID_POSE: u8 = 101;
    }

    impl SetSimulationState::Response {
        pub const ALREADY_IN_TARGET_STATE: u8 = 101;
        pub const STATE_TRANSITION_ERROR: u8 = 102;
        pub const INCORRECT_TRANSITION: u8 = 103;
    }

    impl ResetSimulation::Request {
        pub const SCOPE_DEFAULT: u8 = 0;
        pub const SCOPE_TIME: u8 = 1;
        pub const SCOPE_STATE: u8 = 2;
        pub const SCOPE_SPAWNED: u8 = 4;
        pub const SCOPE_ALL: u8 = 255;
    }
}
