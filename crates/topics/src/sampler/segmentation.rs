//! A segmentation camera's messages, made from each frame the renderer drew for its camera
//! (`segmentation` fills them): the four maps, the two label maps and the boxes, each only
//! while some route reads it.
use super::requested::{add, encoded};
use super::{Routes, TopicSpec};
use crate::messages::sensor_msgs::msg::Image;
use crate::messages::vision_msgs::msg::{Detection2DArray, LabelInfo};
use crate::render::Frame;
use crate::segmentation::{
    Labels, Segmentation, fill_detections, fill_instance_colored, fill_instance_labels,
    fill_label_info, fill_semantic_colored, fill_semantic_labels,
};
use std::sync::Arc;

/// A segmentation camera's topics (indices in the world's list) and message buffers.
pub(super) struct SegmentationMessages {
    /// semantic labels, semantic colours, instance labels, instance colours.
    maps: [usize; 4],
    infos: [usize; 2],
    detections: usize,
    labels: Arc<Labels>,
    map: Image,
    /// The semantic and the instance label maps.
    info: [LabelInfo; 2],
    boxes: Detection2DArray,
    bounds: Vec<[usize; 4]>,
}

impl SegmentationMessages {
    pub fn start(segmentation: Segmentation, topics: &mut Vec<TopicSpec>) -> Self {
        let s = &segmentation;
        let image = |topics: &mut Vec<TopicSpec>, t| add::<Image>(topics, t);
        let maps = [
            &s.semantic_labels,
            &s.semantic_colored,
            &s.instance_labels,
            &s.instance_colored,
        ];
        let maps = maps.map(|t| image(topics, t));
        let infos = [&s.semantic_info, &s.instance_info].map(|t| add::<LabelInfo>(topics, t));
        Self {
            maps,
            infos,
            detections: add::<Detection2DArray>(topics, &s.detections),
            labels: segmentation.labels,
            map: Image::default(),
            info: Default::default(),
            boxes: Detection2DArray::default(),
            bounds: Vec::new(),
        }
    }

    pub fn topics(&self) -> impl Iterator<Item = usize> + '_ {
        self.maps
            .into_iter()
            .chain(self.infos)
            .chain([self.detections])
    }

    pub fn send(&mut self, frame: &Frame, frame_id: &str, routes: &Routes, bytes: &mut Vec<u8>) {
        if frame.segments.is_empty() {
            return;
        }
        let (labels, time) = (&*self.labels, frame.time);
        let fills = [
            fill_semantic_labels,
            fill_semantic_colored,
            fill_instance_labels,
            fill_instance_colored,
        ];
        for (topic, fill) in self.maps.into_iter().zip(fills) {
            if routes.wanted(topic) {
                fill(&mut self.map, frame, frame_id, labels);
                encoded(routes.encode_and_send(topic, &self.map, time, bytes));
            }
        }
        for ((topic, info), semantic) in self
            .infos
            .into_iter()
            .zip(&mut self.info)
            .zip([true, false])
        {
            if routes.wanted(topic) {
                fill_label_info(info, frame, frame_id, labels, semantic);
                encoded(routes.encode_and_send(topic, info, time, bytes));
            }
        }
        if routes.wanted(self.detections) {
            fill_detections(&mut self.boxes, frame, frame_id, labels, &mut self.bounds);
            encoded(routes.encode_and_send(self.detections, &self.boxes, time, bytes));
        }
    }
}
