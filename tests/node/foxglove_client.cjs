// A Foxglove WebSocket client on the official @foxglove/ws-protocol library, as the Foxglove
// app connects: it lists the server's channels, subscribes, decodes the CDR messages with
// Foxglove's ROS 2 libraries from the schemas the server sent, and publishes. Run by
// tests/python/test_foxglove.py; prints one JSON line of what it saw.
//
//   node foxglove_client.cjs view URL SECONDS     channels, joint_states, cmd_vel -> odom
//   node foxglove_client.cjs stall URL SECONDS    subscribes to everything, then stops reading
//   node foxglove_client.cjs services URL SECONDS pause, step 100 and reset through the
//                                                 protocol's services
//   node foxglove_client.cjs count URL SECONDS TOPIC...
//                                                 counts the topics' messages, undecoded
//                                                 (the benchmark's client, benches/streams.py)
//   node foxglove_client.cjs decode URL SECONDS TOPIC...
//                                                 the topics' last messages, decoded
"use strict";
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader, MessageWriter } = require("@foxglove/rosmsg2-serialization");
const WebSocket = require("ws");

const [mode, url, secondsText, ...counted] = process.argv.slice(2);
const seconds = Number(secondsText);
// The Foxglove SDK's servers speak the protocol under its current name, foxglove.sdk.v1 (the
// same messages as foxglove.websocket.v1); the Foxglove app and Lichtblick offer both.
const socket = new WebSocket(url, ["foxglove.sdk.v1", FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
const client = new FoxgloveClient({ ws: socket });
const channels = new Map();
const readers = new Map();
const subscribed = new Map();
const seen = {};
const result = { mode, channels: [], messages: {}, errors: [] };

function finish() {
  result.seen = seen;
  // uint64 and int64 fields decode as BigInt, which JSON has no room for.
  const numbers = (_, v) => (typeof v === "bigint" ? Number(v) : v);
  process.stdout.write(JSON.stringify(result, numbers) + "\n");
  client.close();
  process.exit(0);
}

client.on("error", (error) => result.errors.push(String(error)));
client.on("serverInfo", (info) => {
  result.server = { name: info.name, capabilities: info.capabilities };
});
client.on("time", (event) => {
  result.time = Number(event.timestamp);
});
client.on("advertise", (list) => {
  for (const channel of list) {
    channels.set(channel.id, channel);
    result.channels.push({
      topic: channel.topic,
      encoding: channel.encoding,
      schemaName: channel.schemaName,
      schemaEncoding: channel.schemaEncoding,
    });
    if (mode === "count") {
      if (counted.includes(channel.topic)) subscribed.set(client.subscribe(channel.id), channel);
      continue;
    }
    const camera = channel.topic.endsWith("/image_raw") && !channel.topic.includes("depth");
    const viewed = camera || ["/joint_states", "/odom", "/tf_static"].includes(channel.topic);
    const wanted = mode === "decode" ? counted.includes(channel.topic) : mode === "stall" || viewed;
    if (wanted) {
      const definitions = parse(channel.schema, { ros2: true });
      readers.set(channel.id, new MessageReader(definitions));
      subscribed.set(client.subscribe(channel.id), channel);
    }
  }
});
client.on("message", ({ subscriptionId, data }) => {
  const channel = subscribed.get(subscriptionId);
  if (!channel) return;
  if (mode === "count") {
    seen[channel.topic] = (seen[channel.topic] || 0) + 1;
    return;
  }
  const reader = readers.get(channel.id);
  const message = reader.readMessage(data);
  const count = (seen[channel.topic] = (seen[channel.topic] || 0) + 1);
  if (mode === "decode") {
    result.messages[channel.topic] = message;
    return;
  }
  if (channel.topic === "/joint_states" && count === 1) {
    result.messages.joint_states = {
      name: message.name,
      position: Array.from(message.position),
    };
  }
  if (channel.topic === "/joint_states") {
    result.messages.joint_states_last = Object.fromEntries(
      message.name.map((name, i) => [name, message.position[i]]));
  }
  if (channel.topic.endsWith("/image_raw") && count === 1) {
    result.messages.image = {
      topic: channel.topic,
      width: message.width,
      height: message.height,
      encoding: message.encoding,
      bytes: message.data.length,
      frame_id: message.header.frame_id,
      // Not a blank picture: how many distinct byte values it holds.
      distinct: new Set(message.data).size,
    };
  }
  if (channel.topic === "/tf_static" && count === 1) {
    result.messages.tf_static = message.transforms.map((t) => t.child_frame_id);
  }
  if (channel.topic === "/odom") {
    const position = message.pose.pose.position;
    result.messages.odom_first = result.messages.odom_first || [position.x, position.y];
    result.messages.odom_last = [position.x, position.y];
  }
});

const services = new Map();
const pending = new Map();
client.on("advertiseServices", (list) => {
  for (const service of list) services.set(service.name, service);
  result.services = Array.from(services.values()).map((s) => ({ name: s.name, type: s.type }));
});
client.on("serviceCallResponse", (response) => {
  const done = pending.get(response.callId);
  if (done) done(response);
});
client.on("serviceCallFailure", (failure) => {
  result.errors.push(`service call ${failure.callId}: ${failure.message}`);
});

// Calls service `name` with `request`; resolves with the decoded response.
let nextCall = 1;
function call(name, request) {
  const service = services.get(name);
  if (!service) return Promise.reject(new Error(`no service ${name}`));
  const writer = new MessageWriter(parse(service.request.schema, { ros2: true }));
  const reader = new MessageReader(parse(service.response.schema, { ros2: true }));
  const callId = nextCall++;
  return new Promise((resolve) => {
    pending.set(callId, (response) => resolve(reader.readMessage(response.data)));
    client.sendServiceCallRequest({
      serviceId: service.id, callId, encoding: "cdr", data: writer.writeMessage(request),
    });
  });
}

async function callServices() {
  result.calls = {};
  result.calls.pause = await call("/mujoco_bridge/pause", { data: true });
  // The sim time the server sends once the pause has taken.
  await new Promise((r) => setTimeout(r, 300));
  result.calls.time_paused = result.time;
  result.calls.step = await call("/mujoco_bridge/step", { steps: 100n });
  await new Promise((r) => setTimeout(r, 300));
  result.calls.time_stepped = result.time;
  result.calls.save = await call("/mujoco_bridge/save_snapshot", {});
  result.calls.reset = await call("/mujoco_bridge/reset", {});
  await new Promise((r) => setTimeout(r, 300));
  result.calls.time_reset = result.time;
  result.calls.restore = await call("/mujoco_bridge/restore_snapshot", {});
  await new Promise((r) => setTimeout(r, 300));
  result.calls.time_restored = result.time;
  result.calls.run = await call("/mujoco_bridge/pause", { data: false });
}

socket.on("open", () => {
  if (mode === "services") {
    setTimeout(() => callServices().catch((e) => result.errors.push(String(e))), 1000);
  }
  if (mode === "view") {
    // Publish cmd_vel as the Foxglove app's Teleop panel does, once the view has started.
    setTimeout(() => publishTwist(), 1000);
    setTimeout(() => publishJointCommand(), 1000);
  } else if (mode === "stall") {
    // Subscribed to everything; now read nothing while the server goes on sending.
    setTimeout(() => socket._socket.pause(), 500);
  }
  setTimeout(finish, seconds * 1000);
});

// A joint command as a ROS client sends it on joint_commands: the arm's elbow to 0.8 rad.
function publishJointCommand() {
  const schema = "std_msgs/Header header\nstring[] name\nfloat64[] position\n" +
    "float64[] velocity\nfloat64[] effort\n" +
    "================================================================================\n" +
    "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n" +
    "================================================================================\n" +
    "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
  const writer = new MessageWriter(parse(schema, { ros2: true }));
  const id = client.advertise({
    topic: "/joint_commands",
    encoding: "cdr",
    schemaName: "sensor_msgs/msg/JointState",
    schema,
    schemaEncoding: "ros2msg",
  });
  const command = writer.writeMessage({
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: "" },
    name: ["arm_elbow"],
    position: [0.8],
    velocity: [],
    effort: [],
  });
  client.sendMessage(id, command);
  result.published_joint_commands = 1;
}

function publishTwist() {
  const schema = "geometry_msgs/Vector3 linear\ngeometry_msgs/Vector3 angular\n" +
    "================================================================================\n" +
    "MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n";
  const writer = new MessageWriter(parse(schema, { ros2: true }));
  const id = client.advertise({
    topic: "/cmd_vel",
    encoding: "cdr",
    schemaName: "geometry_msgs/msg/Twist",
    schema,
    schemaEncoding: "ros2msg",
  });
  const twist = writer.writeMessage({
    linear: { x: 0.5, y: 0, z: 0 },
    angular: { x: 0, y: 0, z: 0 },
  });
  const nan = writer.writeMessage({
    linear: { x: NaN, y: 0, z: 0 },
    angular: { x: 0, y: 0, z: 0 },
  });
  result.published = 0;
  const timer = setInterval(() => {
    client.sendMessage(id, twist);
    result.published += 1;
  }, 50);
  client.sendMessage(id, nan);
  result.published_nan = 1;
  setTimeout(() => clearInterval(timer), (seconds - 1.5) * 1000);
}
