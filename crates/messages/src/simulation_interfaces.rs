pub mod msg {
    use super::super::geometry_msgs::msg::{Accel, Pose, PoseStamped, Twist, Vector3};
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
        Resource { uri: String, resource_string: String }
        SpawnEntity {
            name: String,
            allow_renaming: bool,
            entity_resource: Resource,
            entity_namespace: String,
            initial_pose: PoseStamped,
        }
        SpawnResult { result: Result, entity_name: String }
        WorldResource {
            name: String,
            world_resource: Resource,
            description: String,
            tags: Vec<String>,
        }
        Spawnable { uri: String, description: String, spawn_bounds: Bounds }
        EntityInfo { category: EntityCategory, description: String, tags: Vec<String> }
        NamedPose { name: String, description: String, tags: Vec<String>, pose: Pose }
    }

    impl SpawnResult {
        pub const NAME_NOT_UNIQUE: u8 = 101;
        pub const NAME_INVALID: u8 = 102;
        pub const UNSUPPORTED_FORMAT: u8 = 103;
        pub const NO_RESOURCE: u8 = 104;
        pub const NAMESPACE_INVALID: u8 = 105;
        pub const RESOURCE_PARSE_ERROR: u8 = 106;
        pub const MISSING_ASSETS: u8 = 107;
        pub const UNSUPPORTED_ASSETS: u8 = 108;
        pub const INVALID_POSE: u8 = 109;
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
        pub const WORLD_LOADING: u16 = 40;
        pub const WORLD_RESOURCE_STRING: u16 = 41;
        pub const WORLD_TAGS: u16 = 42;
        pub const WORLD_UNLOADING: u16 = 43;
        pub const WORLD_INFO_GETTING: u16 = 44;
        pub const AVAILABLE_WORLDS: u16 = 45;
        pub const SPAWNING_ENTITIES: u16 = 50;
    }
}

pub mod srv {
    use super::super::geometry_msgs::msg::PoseStamped;
    use super::msg::{
        Bounds, EntityFilters, EntityInfo, EntityState, NamedPose, Result, SimulationState,
        SimulatorFeatures, SpawnResult, Spawnable, TagsFilter, WorldResource,
    };

    super::super::service! { "simulation_interfaces", GetEntities {
        request { filters: EntityFilters }
        response { result: Result, entities: Vec<String> }
    } }
    super::super::service! { "simulation_interfaces", GetEntitiesStates {
        request { filters: EntityFilters }
        response { result: Result, entities: Vec<String>, states: Vec<EntityState> }
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

    super::super::service! { "simulation_interfaces", SpawnEntity {
        request {
            name: String,
            allow_renaming: bool,
            uri: String,
            resource_string: String,
            entity_namespace: String,
            initial_pose: PoseStamped,
        }
        response { result: Result, entity_name: String }
    } }
    super::super::service! { "simulation_interfaces", SpawnEntities {
        request { spawn_requests: Vec<crate::simulation_interfaces::msg::SpawnEntity> }
        response { result: Result, results: Vec<SpawnResult> }
    } }
    super::super::service! { "simulation_interfaces", DeleteEntity {
        request { entity: String }
        response { result: Result }
    } }
    super::super::service! { "simulation_interfaces", GetAvailableWorlds {
        request {
            additional_sources: Vec<String>,
            filter: TagsFilter,
            offline_only: bool,
            continue_on_error: bool,
        }
        response { result: Result, worlds: Vec<WorldResource> }
    } }
    super::super::service! { "simulation_interfaces", LoadWorld {
        request {
            uri: String,
            resource_string: String,
            fail_on_unsupported_element: bool,
            ignore_missing_or_unsupported_assets: bool,
        }
        response { result: Result, world: WorldResource }
    } }
    super::super::service! { "simulation_interfaces", GetCurrentWorld {
        request { structure_needs_at_least_one_member: u8 }
        response { result: Result, world: WorldResource }
    } }
    super::super::service! { "simulation_interfaces", GetEntityInfo {
        request { entity: String }
        response { result: Result, info: EntityInfo }
    } }
    super::super::service! { "simulation_interfaces", SetEntityInfo {
        request { entity: String, info: EntityInfo }
        response { result: Result }
    } }
    super::super::service! { "simulation_interfaces", GetEntityBounds {
        request { entity: String }
        response { result: Result, bounds: Bounds }
    } }
    super::super::service! { "simulation_interfaces", GetNamedPoses {
        request { tags: TagsFilter }
        response { result: Result, poses: Vec<NamedPose> }
    } }
    super::super::service! { "simulation_interfaces", GetNamedPoseBounds {
        request { name: String }
        response { result: Result, bounds: Bounds }
    } }
    super::super::service! { "simulation_interfaces", UnloadWorld {
        request { structure_needs_at_least_one_member: u8 }
        response { result: Result }
    } }
    super::super::service! { "simulation_interfaces", GetSpawnables {
        request { sources: Vec<String> }
        response { result: Result, spawnables: Vec<Spawnable> }
    } }

    impl GetCurrentWorld::Response {
        pub const NO_WORLD_LOADED: u8 = 101;
    }

    impl UnloadWorld::Response {
        pub const NO_WORLD_LOADED: u8 = 101;
    }

    impl SpawnEntities::Response {
        pub const ENTITIES_SPAWN_FAILED: u8 = 150;
    }

    impl LoadWorld::Response {
        pub const UNSUPPORTED_FORMAT: u8 = 101;
        pub const NO_RESOURCE: u8 = 102;
        pub const RESOURCE_PARSE_ERROR: u8 = 103;
        pub const MISSING_ASSETS: u8 = 104;
    }

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

pub mod action {
    use super::msg::Result as Outcome;

    super::super::action! { "simulation_interfaces", SimulateSteps {
        goal { steps: u64 }
        result { result: Outcome }
        feedback { completed_steps: u64, remaining_steps: u64 }
    } }
}
