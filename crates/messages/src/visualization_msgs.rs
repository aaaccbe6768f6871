pub mod msg {
    use super::super::builtin_interfaces::msg::Duration;
    use super::super::geometry_msgs::msg::{Point, Pose, Vector3};
    use super::super::sensor_msgs::msg::CompressedImage;
    use super::super::std_msgs::msg::{ColorRGBA, Header};
    super::super::structs! { "visualization_msgs", "msg";
        UVCoordinate { u: f32, v: f32 }
        MeshFile { filename: String, data: Vec<u8> }
        Marker {
            header: Header,
            ns: String,
            id: i32,
            #[serde(rename = "type")]
            type_: i32,
            action: i32,
            pose: Pose,
            scale: Vector3,
            color: ColorRGBA,
            lifetime: Duration,
            frame_locked: bool,
            points: Vec<Point>,
            colors: Vec<ColorRGBA>,
            texture_resource: String,
            texture: CompressedImage,
            uv_coordinates: Vec<UVCoordinate>,
            text: String,
            mesh_resource: String,
            mesh_file: MeshFile,
            mesh_use_embedded_materials: bool,
        }
        MarkerArray { markers: Vec<Marker> }
    }

    impl Marker {
        pub const ARROW: i32 = 0;
        pub const CUBE: i32 = 1;
        pub const SPHERE: i32 = 2;
        pub const CYLINDER: i32 = 3;
        pub const LINE_STRIP: i32 = 4;
        pub const LINE_LIST: i32 = 5;
        pub const CUBE_LIST: i32 = 6;
        pub const SPHERE_LIST: i32 = 7;
        pub const POINTS: i32 = 8;
        pub const TEXT_VIEW_FACING: i32 = 9;
        pub const MESH_RESOURCE: i32 = 10;
        pub const TRIANGLE_LIST: i32 = 11;
        pub const ARROW_STRIP: i32 = 12;
        pub const ADD: i32 = 0;
        pub const MODIFY: i32 = 0;
        pub const DELETE: i32 = 2;
        pub const DELETEALL: i32 = 3;
    }
}
