//! What the viewer draws: the latest state of the running world in a mirror `MjData` of its
//! own, through MuJoCo's scene and renderer, with the status as a text overlay. It follows a
//! world change by rebuilding itself on the new model.
use super::WindowError;
use super::input::{Drag, HELP_KEYS, HELP_WHAT};
use crate::render::mirror;
use crate::sim::{SimHandle, StateSnapshot, WorldGeneration};
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// Geoms the scene holds beyond the model's own (contacts, frames, perturbation arrows).
const DECORATION_GEOMS: usize = 10_000;

/// The figures of the status overlay, made by the app each frame.
pub struct Status {
    pub time: f64,
    pub real_time_factor: f64,
    pub mode: &'static str,
    pub frames_per_second: f64,
}

pub struct Picture {
    pub world: Arc<WorldGeneration>,
    data: MjData<Arc<MjModel>>,
    state: StateSnapshot,
    scene: MjvScene,
    context: MjrContext,
    camera: MjvCamera,
    /// The free camera, kept while a model camera is shown.
    free: MjvCamera,
    /// 0: the free camera; k: the model's camera k - 1.
    pub camera_index: usize,
    option: MjvOption,
    pub perturb: MjvPerturb,
    pub full_quality: bool,
    pub help: bool,
}

impl Picture {
    /// The picture of `world`. The window's GL context must be current on this thread.
    pub fn new(world: Arc<WorldGeneration>, full_quality: bool) -> Result<Self, WindowError> {
        let model = world.model.clone();
        let data = MjData::try_new(model.clone()).map_err(|_| WindowError::NoData)?;
        let free = MjvCamera::new_free(&model);
        let mut option = MjvOption::default();
        option.flags[MjtVisFlag::mjVIS_CONTACTPOINT as usize] = 1;
        option.flags[MjtVisFlag::mjVIS_CONTACTFORCE as usize] = 1;
        Ok(Self {
            state: StateSnapshot::default(),
            scene: MjvScene::new(
                &model,
                2 * model.ffi().ngeom.max(0) as usize + DECORATION_GEOMS,
            ),
            // SAFETY: the caller made the window's context current on this thread, and the
            // picture lives and dies on it.
            context: unsafe { MjrContext::new(&model) },
            camera: free.clone(),
            free,
            camera_index: 0,
            option,
            perturb: MjvPerturb::default(),
            full_quality,
            help: false,
            world,
            data,
        })
    }

    /// Rebuilds on the running world after a change, keeping the view.
    pub fn follow(&mut self, handle: &SimHandle) -> Result<(), WindowError> {
        let now = handle.world();
        if now.number == self.world.number {
            return Ok(());
        }
        let free = self.free.clone();
        let mut next = Self::new(now, self.full_quality)?;
        next.free = free.clone();
        next.camera = free;
        next.option = self.option.clone();
        next.help = self.help;
        *self = next;
        Ok(())
    }

    /// The newest state, with what a forward pass derives from it (contacts, their forces).
    pub fn update(&mut self) {
        mirror::update(&self.world, &mut self.state, &mut self.data);
        mirror::set_motion(&self.state, &mut self.data);
        self.data.forward();
    }

    pub fn time(&self) -> f64 {
        self.state.time
    }

    /// Draws the scene and the overlays into `viewport` of the window.
    pub fn draw(&mut self, viewport: MjrRectangle, status: &Status) {
        self.scene.update(
            &mut self.data,
            &self.option,
            &self.perturb,
            &mut self.camera,
        );
        // SAFETY: plain flag bytes of a scene that `update` just filled.
        unsafe {
            let raw = self.scene.ffi_mut();
            raw.flags[MjtRndFlag::mjRND_SHADOW as usize] = self.full_quality as u8;
            raw.flags[MjtRndFlag::mjRND_REFLECTION as usize] = self.full_quality as u8;
        }
        self.scene.render(&viewport, &self.context);
        let values = format!(
            "{:.3} s\n{:.2}\n{}\n{:.0}\n{}",
            status.time,
            status.real_time_factor,
            status.mode,
            status.frames_per_second,
            self.camera_name(),
        );
        self.context.overlay(
            MjtFont::mjFONT_NORMAL,
            MjtGridPos::mjGRID_BOTTOMLEFT,
            viewport,
            "Time\nReal-time factor\nMode\nFrames/s\nCamera",
            Some(&values),
        );
        if let Some(body) = self.selected() {
            let name = self
                .world
                .model
                .id_to_name(MjtObjBase::mjOBJ_BODY, body)
                .unwrap_or("(unnamed)");
            self.context.overlay(
                MjtFont::mjFONT_NORMAL,
                MjtGridPos::mjGRID_BOTTOMRIGHT,
                viewport,
                &ascii(name),
                None,
            );
        }
        let (keys, what) = if self.help {
            (HELP_KEYS, HELP_WHAT)
        } else {
            ("F1", "help")
        };
        self.context.overlay(
            MjtFont::mjFONT_NORMAL,
            MjtGridPos::mjGRID_TOPLEFT,
            viewport,
            keys,
            Some(what),
        );
    }

    fn camera_name(&self) -> String {
        match self.camera_index {
            0 => "free".into(),
            k => ascii(
                self.world
                    .model
                    .id_to_name(MjtObjBase::mjOBJ_CAMERA, k - 1)
                    .unwrap_or("(unnamed)"),
            ),
        }
    }

    /// Shows camera `index` (0: free; k: the model's camera k - 1), wrapping around.
    pub fn show_camera(&mut self, index: isize) {
        let count = 1 + self.world.model.ffi().ncam.max(0) as isize;
        let index = index.rem_euclid(count) as usize;
        if self.camera_index == 0 {
            self.free = self.camera.clone();
        }
        self.camera = match index {
            0 => self.free.clone(),
            k => MjvCamera::new_fixed(k - 1),
        };
        self.camera_index = index;
    }

    pub fn toggle(&mut self, flag: MjtVisFlag) {
        let value = &mut self.option.flags[flag as usize];
        *value = (*value == 0) as u8;
    }

    /// Contact points and forces together.
    pub fn toggle_contacts(&mut self) {
        let on = self.option.flags[MjtVisFlag::mjVIS_CONTACTPOINT as usize] == 0;
        for flag in [
            MjtVisFlag::mjVIS_CONTACTPOINT,
            MjtVisFlag::mjVIS_CONTACTFORCE,
        ] {
            self.option.flags[flag as usize] = on as u8;
        }
    }

    /// None, bodies, geoms, sites, world.
    pub fn cycle_frames(&mut self) {
        let order = [
            MjtFrame::mjFRAME_NONE,
            MjtFrame::mjFRAME_BODY,
            MjtFrame::mjFRAME_GEOM,
            MjtFrame::mjFRAME_SITE,
            MjtFrame::mjFRAME_WORLD,
        ];
        let now = order
            .iter()
            .position(|f| *f as i32 == self.option.frame)
            .unwrap_or(0);
        self.option.frame = order[(now + 1) % order.len()] as i32;
    }

    pub fn toggle_sites(&mut self) {
        let on = self.option.sitegroup.iter().all(|g| *g == 0);
        self.option.sitegroup = [on as u8; 6];
    }

    /// Selects the body under the window point (`x`, `y` from the bottom left, in 0..1).
    pub fn select(&mut self, aspect: f64, x: f64, y: f64) {
        let found = self
            .scene
            .find_selection(&mut self.data, &self.option, aspect, x, y);
        self.perturb.active = 0;
        log::trace!("viewer: selected {found:?}");
        match found.body_id.filter(|b| *b > 0) {
            Some(body) => {
                self.perturb.select = body as i32;
                self.perturb.update_local_pos(&found.point, &self.data);
            }
            None => self.perturb.select = 0,
        }
    }

    pub fn selected(&self) -> Option<usize> {
        (self.perturb.select > 0).then_some(self.perturb.select as usize)
    }

    /// Moves the view or the perturbation by a drag of (`dx`, `dy`) of the window's height.
    pub fn drag(&mut self, drag: Drag, dx: f64, dy: f64) {
        match drag {
            Drag::Camera(action) => {
                if self.camera_index != 0 {
                    self.show_camera(0);
                }
                self.camera.move_(action, &self.world.model, dx, dy);
            }
            Drag::Perturb(kind, action) => {
                if self.selected().is_none() {
                    return;
                }
                if self.perturb.active != kind as i32 {
                    self.perturb.start(kind, &mut self.data, &self.scene);
                }
                self.perturb.move_(&self.data, action, dx, dy, &self.scene);
            }
        }
    }

    /// The drag ended: the body is let go.
    pub fn release(&mut self) {
        self.perturb.active = 0;
    }

    /// The wrench the perturbation puts on its body now (world frame, at the centre of mass),
    /// from MuJoCo's spring between the body and the dragged reference.
    pub fn perturbation(&mut self) -> Option<(usize, [f64; 6])> {
        let body = self.selected().filter(|_| self.perturb.active != 0)?;
        self.perturb.apply(&mut self.data);
        let wrench = *self.data.xfrc_applied().get(body)?;
        self.data.xfrc_applied_mut().fill([0.0; 6]);
        wrench
            .iter()
            .all(|v| v.is_finite())
            .then_some((body, wrench))
    }
}

/// MuJoCo's overlay font draws ASCII only.
fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}
