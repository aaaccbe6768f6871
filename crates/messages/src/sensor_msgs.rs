pub mod msg {
    use super::super::geometry_msgs::msg::{Quaternion, Vector3};
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "sensor_msgs", "msg";
        JointState {
            header: Header,
            name: Vec<String>,
            position: Vec<f64>,
            velocity: Vec<f64>,
            effort: Vec<f64>,
        }
        Imu {
            header: Header,
            orientation: Quaternion,
            orientation_covariance: [f64; 9],
            angular_velocity: Vector3,
            angular_velocity_covariance: [f64; 9],
            linear_acceleration: Vector3,
            linear_acceleration_covariance: [f64; 9],
        }
        MagneticField {
            header: Header,
            magnetic_field: Vector3,
            magnetic_field_covariance: [f64; 9],
        }
        NavSatStatus {
            status: i8,
            service: u16,
        }
        NavSatFix {
            header: Header,
            status: NavSatStatus,
            latitude: f64,
            longitude: f64,
            altitude: f64,
            position_covariance: [f64; 9],
            position_covariance_type: u8,
        }
        FluidPressure {
            header: Header,
            fluid_pressure: f64,
            variance: f64,
        }
        LaserScan {
            header: Header,
            angle_min: f32,
            angle_max: f32,
            angle_increment: f32,
            time_increment: f32,
            scan_time: f32,
            range_min: f32,
            range_max: f32,
            ranges: Vec<f32>,
            intensities: Vec<f32>,
        }
        Range {
            header: Header,
            radiation_type: u8,
            field_of_view: f32,
            min_range: f32,
            max_range: f32,
            range: f32,
            variance: f32,
        }
        CompressedImage {
            header: Header,
            format: String,
            #[serde(with = "serde_bytes")]
            data: Vec<u8>,
        }
        Image {
            header: Header,
            height: u32,
            width: u32,
            encoding: String,
            is_bigendian: u8,
            step: u32,
            // As one run of bytes (the same CDR as a sequence of uint8, written at once).
            #[serde(with = "serde_bytes")]
            data: Vec<u8>,
        }
        PointField {
            name: String,
            offset: u32,
            datatype: u8,
            count: u32,
        }
        PointCloud2 {
            header: Header,
            height: u32,
            width: u32,
            fields: Vec<PointField>,
            is_bigendian: bool,
            point_step: u32,
            row_step: u32,
            #[serde(with = "serde_bytes")]
            data: Vec<u8>,
            is_dense: bool,
        }
        RegionOfInterest {
            x_offset: u32,
            y_offset: u32,
            height: u32,
            width: u32,
            do_rectify: bool,
        }
        CameraInfo {
            header: Header,
            height: u32,
            width: u32,
            distortion_model: String,
            d: Vec<f64>,
            k: [f64; 9],
            r: [f64; 9],
            p: [f64; 12],
            binning_x: u32,
            binning_y: u32,
            roi: RegionOfInterest,
        }
    }

    impl PointField {
        pub const FLOAT32: u8 = 7;
    }

    impl Range {
        pub const ULTRASOUND: u8 = 0;
        pub const INFRARED: u8 = 1;
    }
}
