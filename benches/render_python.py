"""The Python reference of benches/render.rs (started by it; not run alone): MuJoCo's own
Python bindings on the same compiled model (MJB).

  MODEL camera CAMERA_ID QUALITY DEPTH SECONDS
      mujoco.Renderer at 640x480 on camera CAMERA_ID, `fast` (no shadows, reflections or
      multisampling) or `full`; DEPTH true renders a depth pass after each RGB pass, as the
      Renderer reads depth. Prints frames per second.
  MODEL lidar CHANNELS SAMPLES SECONDS
      mujoco.mj_multiRay over CHANNELS x SAMPLES rays from the first body above the floor,
      back to back. Prints rays per second.
"""
import os
import sys
import time

import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")
import mujoco  # noqa: E402


def camera(model, camera_id, quality, depth, seconds):
    if quality == "fast":
        model.vis.quality.offsamples = 0
    renderer = mujoco.Renderer(model, 480, 640)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    if quality == "fast":
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
    frames, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        renderer.update_scene(data, camera=camera_id)
        if quality == "fast":
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        renderer.render()
        if depth:
            renderer.enable_depth_rendering()
            renderer.render()
            renderer.disable_depth_rendering()
        frames += 1
    return frames / (time.perf_counter() - start)


def lidar(model, channels, samples, seconds):
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    elevation = np.radians(np.linspace(-15, 15, channels))[:, None]
    azimuth = np.radians(np.linspace(-180, 180, samples, endpoint=False))[None, :]
    rays = np.stack([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth),
                     np.sin(elevation) * np.ones_like(azimuth)], axis=-1).reshape(-1, 3)
    count = len(rays)
    origin = data.xpos[1] + np.array([0.0, 0.0, 0.1])
    geoms = np.zeros(count, dtype=np.int32)
    distances = np.zeros(count)
    scans, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        mujoco.mj_multiRay(model, data, origin, rays.ravel(), None, 1, -1, geoms, distances,
                           None, count, 30.0)
        scans += 1
    return scans * count / (time.perf_counter() - start)


def main():
    model = mujoco.MjModel.from_binary_path(sys.argv[1])
    if sys.argv[2] == "camera":
        rate = camera(model, int(sys.argv[3]), sys.argv[4], sys.argv[5] == "true",
                      float(sys.argv[6]))
    else:
        rate = lidar(model, int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    print(f"{rate:.3f}")


if __name__ == "__main__":
    main()
