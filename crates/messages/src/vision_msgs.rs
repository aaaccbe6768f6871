pub mod msg {
    use super::super::geometry_msgs::msg::PoseWithCovariance;
    use super::super::std_msgs::msg::Header;
    super::super::structs! { "vision_msgs", "msg";
        Point2D { x: f64, y: f64 }
        Pose2D { position: Point2D, theta: f64 }
        BoundingBox2D { center: Pose2D, size_x: f64, size_y: f64 }
        ObjectHypothesis { class_id: String, score: f64 }
        ObjectHypothesisWithPose { hypothesis: ObjectHypothesis, pose: PoseWithCovariance }
        Detection2D {
            header: Header,
            results: Vec<ObjectHypothesisWithPose>,
            bbox: BoundingBox2D,
            id: String,
        }
        Detection2DArray { header: Header, detections: Vec<Detection2D> }
        VisionClass { class_id: u16, class_name: String }
        LabelInfo { header: Header, class_map: Vec<VisionClass>, threshold: f32 }
    }
}
