pub mod msg {
    use super::super::builtin_interfaces::msg::Time;
    super::super::structs! { "std_msgs", "msg";
        Header { stamp: Time, frame_id: std::string::String }
        String { data: std::string::String }
        Bool { data: bool }
        UInt32 { data: u32 }
        ColorRGBA { r: f32, g: f32, b: f32, a: f32 }
        MultiArrayDimension { label: std::string::String, size: u32, stride: u32 }
        MultiArrayLayout { dim: Vec<MultiArrayDimension>, data_offset: u32 }
        Float64MultiArray { layout: MultiArrayLayout, data: Vec<f64> }
    }
}
