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

    // The parameter messages every ROS 2 node's parameter services use.
    super::super::structs! { "rcl_interfaces", "msg";
        ParameterValue {
            #[serde(rename = "type")]
            type_: u8,
            bool_value: bool,
            integer_value: i64,
            double_value: f64,
            string_value: String,
            byte_array_value: Vec<u8>,
            bool_array_value: Vec<bool>,
            integer_array_value: Vec<i64>,
            double_array_value: Vec<f64>,
            string_array_value: Vec<String>,
        }
        Parameter {
            name: String,
            value: ParameterValue,
        }
        FloatingPointRange {
            from_value: f64,
            to_value: f64,
            step: f64,
        }
        IntegerRange {
            from_value: i64,
            to_value: i64,
            step: u64,
        }
        ParameterDescriptor {
            name: String,
            #[serde(rename = "type")]
            type_: u8,
            description: String,
            additional_constraints: String,
            read_only: bool,
            dynamic_typing: bool,
            floating_point_range: Vec<FloatingPointRange>,
            integer_range: Vec<IntegerRange>,
        }
        SetParametersResult {
            successful: bool,
            reason: String,
        }
        ListParametersResult {
            names: Vec<String>,
            prefixes: Vec<String>,
        }
        ParameterEvent {
            stamp: Time,
            node: String,
            new_parameters: Vec<Parameter>,
            changed_parameters: Vec<Parameter>,
            deleted_parameters: Vec<Parameter>,
        }
    }

    /// rcl_interfaces/msg/ParameterType.
    pub mod parameter_type {
        pub const NOT_SET: u8 = 0;
        pub const BOOL: u8 = 1;
        pub const INTEGER: u8 = 2;
        pub const DOUBLE: u8 = 3;
        pub const STRING: u8 = 4;
        pub const BYTE_ARRAY: u8 = 5;
        pub const BOOL_ARRAY: u8 = 6;
        pub const INTEGER_ARRAY: u8 = 7;
        pub const DOUBLE_ARRAY: u8 = 8;
        pub const STRING_ARRAY: u8 = 9;
    }
}

pub mod srv {
    use super::msg::*;
    super::super::service! { "rcl_interfaces", ListParameters {
        request { prefixes: Vec<String>, depth: u64 }
        response { result: ListParametersResult }
    } }
    super::super::service! { "rcl_interfaces", GetParameters {
        request { names: Vec<String> }
        response { values: Vec<ParameterValue> }
    } }
    super::super::service! { "rcl_interfaces", GetParameterTypes {
        request { names: Vec<String> }
        response { types: Vec<u8> }
    } }
    super::super::service! { "rcl_interfaces", SetParameters {
        request { parameters: Vec<Parameter> }
        response { results: Vec<SetParametersResult> }
    } }
    super::super::service! { "rcl_interfaces", SetParametersAtomically {
        request { parameters: Vec<Parameter> }
        response { result: SetParametersResult }
    } }
    super::super::service! { "rcl_interfaces", DescribeParameters {
        request { names: Vec<String> }
        response { descriptors: Vec<ParameterDescriptor> }
    } }
}
