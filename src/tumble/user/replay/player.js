// tumble replay player: reads the data blocks the page carries and plays the bodies' poses with three.js
// (the global THREE from the inlined three.min.js). The world is z-up; quaternions here are three's
// (x, y, z, w) order (the Python side converted them). User strings (title, body names) are shown with
// textContent only, never parsed as HTML.
(function () {
  "use strict";

  var root = document.body;
  var state = window.tumbleReplay = {
    frame: 0, frames: 0, bodies: 0, instances: 0, drawn: 0, renders: 0,
    time: 0, playing: false, ready: false, error: null
  };
  var byId = function (id) { return document.getElementById(id); };

  function fail(message) {
    state.error = message;
    root.dataset.error = message;
    byId("message").textContent = message;
  }

  // ------------------------------------------------------------------ data
  var meta;
  try {
    meta = JSON.parse(byId("tumble-meta").textContent);
  } catch (e) {
    fail("the replay data could not be read: " + e.message);
    return;
  }

  function decodeFloats(id) {
    var text = byId(id).textContent.trim();
    if (!text) return new Float32Array(0);
    var bin = atob(text);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float32Array(bytes.buffer);  // little-endian float32, as every browser platform is
  }

  var times = meta.times;
  var F = times.length;
  var n = meta.bodyCount;
  var poses = decodeFloats("tumble-poses");  // (F, n, 7): px, py, pz, qx, qy, qz, qw
  var contactRows = meta.contacts ? decodeFloats("tumble-contacts") : null;  // (c, 6): point, normal
  if (poses.length !== F * n * 7) {
    fail("the replay data is damaged (" + poses.length + " pose numbers, expected " + F * n * 7 + ")");
    return;
  }
  state.frames = F;
  state.bodies = n;
  state.instances = meta.instances.length;
  root.dataset.frames = String(F);
  root.dataset.bodies = String(n);
  root.dataset.instances = String(meta.instances.length);

  var hex = function (c) { return "#" + ("000000" + c.toString(16)).slice(-6); };

  // ------------------------------------------------------------------ panel
  var t0 = times[0], t1 = times[F - 1];
  byId("title").textContent = meta.title;
  byId("summary").textContent = n + (n === 1 ? " body" : " bodies") + " \u00b7 " + F + " frames \u00b7 " +
    (t1 - t0).toFixed(3) + " s";
  var scrub = byId("scrub");
  scrub.max = String(Math.max(F - 1, 0));
  var timeLabel = byId("time");
  var playButton = byId("play");
  var speedSelect = byId("speed");
  var loopBox = byId("loop");
  var contactBox = byId("show-contacts");
  if (!meta.contacts) {
    contactBox.disabled = true;
    contactBox.parentNode.title = "no contacts were recorded";
  }
  var list = byId("names");
  meta.names.forEach(function (name, i) {
    var item = document.createElement("li");
    var swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = hex(meta.colours[i]);
    item.appendChild(swatch);
    item.appendChild(document.createTextNode(name));
    item.addEventListener("click", function () { focusBody(i); });
    list.appendChild(item);
  });

  // ------------------------------------------------------------------ interpolated body poses
  var current = new Float32Array(n * 7);  // the bodies' poses at the shown time

  function frameAt(t) {  // the last stored frame at or before t (binary search)
    var lo = 0, hi = F - 1;
    if (t >= times[hi]) return hi;
    while (hi - lo > 1) {
      var mid = (lo + hi) >> 1;
      if (times[mid] <= t) lo = mid; else hi = mid;
    }
    return lo;
  }

  function interpolate(t) {
    var k = frameAt(t);
    var a = 0;
    if (k < F - 1) a = Math.min(Math.max((t - times[k]) / (times[k + 1] - times[k]), 0), 1);
    var A = k * n * 7, B = Math.min(k + 1, F - 1) * n * 7;
    for (var b = 0; b < n; b++) {
      var o = b * 7, i = A + o, j = B + o;
      current[o] = poses[i] + a * (poses[j] - poses[i]);
      current[o + 1] = poses[i + 1] + a * (poses[j + 1] - poses[i + 1]);
      current[o + 2] = poses[i + 2] + a * (poses[j + 2] - poses[i + 2]);
      // Normalised lerp along the shorter arc: within one frame's rotation it is as good as slerp.
      var s = (poses[i + 3] * poses[j + 3] + poses[i + 4] * poses[j + 4] + poses[i + 5] * poses[j + 5] +
               poses[i + 6] * poses[j + 6]) < 0 ? -a : a;
      var qx = (1 - a) * poses[i + 3] + s * poses[j + 3], qy = (1 - a) * poses[i + 4] + s * poses[j + 4];
      var qz = (1 - a) * poses[i + 5] + s * poses[j + 5], qw = (1 - a) * poses[i + 6] + s * poses[j + 6];
      var m = 1 / Math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
      current[o + 3] = qx * m; current[o + 4] = qy * m; current[o + 5] = qz * m; current[o + 6] = qw * m;
    }
    return k;
  }

  // ------------------------------------------------------------------ scene
  var b = meta.bounds;
  var center = new THREE.Vector3((b[0] + b[3]) / 2, (b[1] + b[4]) / 2, (b[2] + b[5]) / 2);
  var radius = Math.max(0.5 * Math.hypot(b[3] - b[0], b[4] - b[1], b[5] - b[2]), 0.05);

  var renderer = null;
  try {
    renderer = new THREE.WebGLRenderer({ antialias: true });
  } catch (e) {
    fail("WebGL is not available in this browser, so the bodies cannot be drawn (" + e.message + ")");
  }
  var scene = new THREE.Scene();
  scene.background = new THREE.Color(0xdfe3e8);
  var camera = new THREE.PerspectiveCamera(45, window.innerWidth / Math.max(window.innerHeight, 1), 0.01, 1000);
  camera.up.set(0, 0, 1);

  var hemi = new THREE.HemisphereLight(0xffffff, 0x8d8478, 1.7);
  hemi.position.set(0, 0, 1);  // sky along +z: the world is z-up
  scene.add(hemi);
  var sun = new THREE.DirectionalLight(0xffffff, 2.0);
  sun.position.set(0.45, -0.75, 1.0);
  scene.add(sun);

  var meshGeometry = function (spec, many) {
    var g, seg = many ? 16 : 32;
    if (spec.type === "box") {
      g = new THREE.BoxGeometry(2, 2, 2);  // unit half extents, scaled per instance
    } else if (spec.type === "sphere") {
      g = new THREE.SphereGeometry(1, seg, seg / 2);  // spheres and ellipsoids, scaled per instance
    } else if (spec.type === "cylinder") {
      g = new THREE.CylinderGeometry(1, 1, 2, seg, 1).rotateX(Math.PI / 2);  // three's axis is y; ours z
    } else if (spec.type === "capsule") {
      g = new THREE.CapsuleGeometry(spec.radius, 2 * spec.halfLength, seg / 4, seg).rotateX(Math.PI / 2);
    } else {  // hull: each face a triangle fan, unshared vertices so the normals are flat
      var v = spec.vertices, out = [];
      spec.faces.forEach(function (face) {
        for (var k = 1; k + 1 < face.length; k++) {
          [face[0], face[k], face[k + 1]].forEach(function (idx) { out.push(v[idx][0], v[idx][1], v[idx][2]); });
        }
      });
      g = new THREE.BufferGeometry();
      g.setAttribute("position", new THREE.Float32BufferAttribute(out, 3));
      g.computeVertexNormals();
    }
    return g;
  };

  // Instances grouped by mesh; per instance: its body, its pose in the body frame and its scale.
  var material = new THREE.MeshStandardMaterial({ roughness: 0.55, metalness: 0.05 });
  var groups = meta.meshes.map(function () { return []; });
  meta.instances.forEach(function (inst) { groups[inst[1]].push(inst); });
  var many = meta.instances.length > 2000;
  var color = new THREE.Color();
  var meshes = groups.map(function (insts, m) {
    var mesh = new THREE.InstancedMesh(meshGeometry(meta.meshes[m], many), material, insts.length);
    mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    mesh.frustumCulled = false;  // instances move far from the geometry's own bounding sphere
    var local = new Float32Array(insts.length * 10);
    var owner = new Int32Array(insts.length);
    insts.forEach(function (inst, j) {
      owner[j] = inst[0];
      for (var c = 0; c < 10; c++) local[j * 10 + c] = inst[2 + c];
      mesh.setColorAt(j, color.setHex(meta.colours[inst[0]]));
    });
    if (mesh.instanceColor) mesh.instanceColor.needsUpdate = true;
    scene.add(mesh);
    return { mesh: mesh, local: local, owner: owner };
  });

  function placeInstances() {
    for (var g = 0; g < meshes.length; g++) {
      var M = meshes[g], te = M.mesh.instanceMatrix.array, L = M.local, count = M.owner.length;
      for (var j = 0; j < count; j++) {
        var o = M.owner[j] * 7, l = j * 10, e = j * 16;
        var bx = current[o + 3], by = current[o + 4], bz = current[o + 5], bw = current[o + 6];
        // world position = body position + body rotation applied to the part's offset
        var vx = L[l], vy = L[l + 1], vz = L[l + 2];
        var tx = 2 * (by * vz - bz * vy), ty = 2 * (bz * vx - bx * vz), tz = 2 * (bx * vy - by * vx);
        var px = current[o] + vx + bw * tx + (by * tz - bz * ty);
        var py = current[o + 1] + vy + bw * ty + (bz * tx - bx * tz);
        var pz = current[o + 2] + vz + bw * tz + (bx * ty - by * tx);
        // world rotation = body rotation * part rotation
        var ax = L[l + 3], ay = L[l + 4], az = L[l + 5], aw = L[l + 6];
        var x = bx * aw + bw * ax + by * az - bz * ay;
        var y = by * aw + bw * ay + bz * ax - bx * az;
        var z = bz * aw + bw * az + bx * ay - by * ax;
        var w = bw * aw - bx * ax - by * ay - bz * az;
        var sx = L[l + 7], sy = L[l + 8], sz = L[l + 9];
        // Matrix4.compose, written out to avoid allocating per instance
        var x2 = x + x, y2 = y + y, z2 = z + z;
        var xx = x * x2, xy = x * y2, xz = x * z2, yy = y * y2, yz = y * z2, zz = z * z2;
        var wx = w * x2, wy = w * y2, wz = w * z2;
        te[e] = (1 - (yy + zz)) * sx; te[e + 1] = (xy + wz) * sx; te[e + 2] = (xz - wy) * sx; te[e + 3] = 0;
        te[e + 4] = (xy - wz) * sy; te[e + 5] = (1 - (xx + zz)) * sy; te[e + 6] = (yz + wx) * sy; te[e + 7] = 0;
        te[e + 8] = (xz + wy) * sz; te[e + 9] = (yz - wx) * sz; te[e + 10] = (1 - (xx + yy)) * sz; te[e + 11] = 0;
        te[e + 12] = px; te[e + 13] = py; te[e + 14] = pz; te[e + 15] = 1;
      }
      M.mesh.instanceMatrix.needsUpdate = true;
    }
  }

  // Ground: a large plane with a grid whose spacing suits the scene's size, lines on round coordinates. The
  // grid is a repeated texture, not line segments: software GL (SwiftShader, what headless browsers use)
  // drops lines that cross the camera plane, and a texture also fades evenly into the distance.
  if (meta.ground !== null) {
    var extent = Math.max(b[3] - b[0], b[4] - b[1], radius, 1e-3);
    var step = Math.pow(10, Math.round(Math.log10(extent / 10)));
    var cells = 2 * Math.min(Math.ceil(extent * 10 / step), 1000);  // even: the centre lands on a line
    var size = cells * step;
    var gx = Math.round(center.x / step) * step, gy = Math.round(center.y / step) * step;
    var cell = document.createElement("canvas");
    cell.width = cell.height = 128;
    var pen = cell.getContext("2d");
    pen.fillStyle = "#cfd4db";
    pen.fillRect(0, 0, 128, 128);
    pen.strokeStyle = "#a3abb6";
    pen.lineWidth = 4;  // 2 px on each side of the cell's border, i.e. a 4 px line once tiled
    pen.strokeRect(0, 0, 128, 128);
    var texture = new THREE.CanvasTexture(cell);
    texture.wrapS = texture.wrapT = THREE.RepeatWrapping;
    texture.repeat.set(cells, cells);
    texture.colorSpace = THREE.SRGBColorSpace;
    if (renderer) texture.anisotropy = renderer.capabilities.getMaxAnisotropy();
    var plane = new THREE.Mesh(new THREE.PlaneGeometry(size, size),
      new THREE.MeshStandardMaterial({ map: texture, roughness: 1, metalness: 0 }));
    plane.position.set(gx, gy, meta.ground);
    scene.add(plane);
  }

  // Contacts: points and normal segments of the shown frame, drawn over the bodies.
  var contactPoints = null, contactLines = null;
  if (meta.contacts && meta.contacts.maxCount > 0) {
    var maxCount = meta.contacts.maxCount;
    var pg = new THREE.BufferGeometry();
    pg.setAttribute("position", new THREE.BufferAttribute(new Float32Array(maxCount * 3), 3));
    var lg = new THREE.BufferGeometry();
    lg.setAttribute("position", new THREE.BufferAttribute(new Float32Array(maxCount * 6), 3));
    contactPoints = new THREE.Points(pg, new THREE.PointsMaterial(
      { color: 0xd7263d, size: 4, sizeAttenuation: false, depthTest: false }));
    contactLines = new THREE.LineSegments(lg, new THREE.LineBasicMaterial({ color: 0xd7263d, depthTest: false }));
    contactPoints.frustumCulled = contactLines.frustumCulled = false;
    contactPoints.renderOrder = contactLines.renderOrder = 1;
    contactPoints.visible = contactLines.visible = contactBox.checked;  // a reload may restore the box
    scene.add(contactPoints);
    scene.add(contactLines);
  }
  var contactFrame = -1;
  function placeContacts(k) {
    if (!contactPoints || !contactPoints.visible || contactFrame === k) return;
    contactFrame = k;
    var start = meta.contacts.offsets[k], end = meta.contacts.offsets[k + 1], len = radius * 0.06;
    var p = contactPoints.geometry.attributes.position, l = contactLines.geometry.attributes.position;
    for (var c = start; c < end; c++) {
      var r = c * 6, j = c - start;
      p.array[j * 3] = contactRows[r]; p.array[j * 3 + 1] = contactRows[r + 1]; p.array[j * 3 + 2] = contactRows[r + 2];
      for (var d = 0; d < 3; d++) {
        l.array[j * 6 + d] = contactRows[r + d];
        l.array[j * 6 + 3 + d] = contactRows[r + d] + len * contactRows[r + 3 + d];
      }
    }
    contactPoints.geometry.setDrawRange(0, end - start);
    contactLines.geometry.setDrawRange(0, 2 * (end - start));
    p.needsUpdate = l.needsUpdate = true;
  }

  // ------------------------------------------------------------------ orbit camera (z-up)
  var orbit = { target: new THREE.Vector3(), azimuth: 0, elevation: 0, distance: 1 };
  function resetView() {
    orbit.target.copy(center);
    orbit.azimuth = -Math.PI / 2 + 0.55;  // from -y, a little to +x: x to the right, looking along +y
    orbit.elevation = 0.45;
    orbit.distance = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov) / 2) * 1.05;
    updateCamera();
  }
  function updateCamera() {
    var ce = Math.cos(orbit.elevation);
    camera.position.set(ce * Math.cos(orbit.azimuth), ce * Math.sin(orbit.azimuth), Math.sin(orbit.elevation))
      .multiplyScalar(orbit.distance).add(orbit.target);
    camera.near = orbit.distance * 0.005;
    camera.far = orbit.distance * 20 + radius * 20;
    camera.updateProjectionMatrix();
    camera.lookAt(orbit.target);
    dirty = true;
  }
  function focusBody(i) {
    orbit.target.set(current[i * 7], current[i * 7 + 1], current[i * 7 + 2]);
    updateCamera();
  }

  var dirty = true;
  var drag = null;
  var canvas = renderer ? renderer.domElement : document.createElement("canvas");
  var tip = byId("tip");
  canvas.addEventListener("contextmenu", function (e) { e.preventDefault(); });
  canvas.addEventListener("pointerdown", function (e) {
    drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.button === 1 || e.shiftKey };
    canvas.setPointerCapture(e.pointerId);
    tip.hidden = true;
  });
  canvas.addEventListener("pointerup", function (e) {
    drag = null;
    if (canvas.hasPointerCapture(e.pointerId)) canvas.releasePointerCapture(e.pointerId);
  });
  canvas.addEventListener("pointermove", function (e) {
    if (!drag) { hover(e); return; }
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX; drag.y = e.clientY;
    if (drag.pan) {
      // move the target in the view plane, as far as the pointer moved at the target's depth
      var k = 2 * orbit.distance * Math.tan(THREE.MathUtils.degToRad(camera.fov) / 2) / canvas.clientHeight;
      var right = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 0);
      var up = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 1);
      orbit.target.addScaledVector(right, -dx * k).addScaledVector(up, dy * k);
    } else {
      orbit.azimuth -= dx * 0.008;
      orbit.elevation = Math.min(Math.max(orbit.elevation + dy * 0.008, -1.55), 1.55);
    }
    updateCamera();
  });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var delta = e.deltaMode === 1 ? e.deltaY * 30 : e.deltaY;
    orbit.distance = Math.min(Math.max(orbit.distance * Math.exp(delta * 0.001), radius * 1e-3), radius * 200);
    updateCamera();
  }, { passive: false });
  canvas.addEventListener("pointerleave", function () { tip.hidden = true; });

  // Hover: the body whose bounding sphere the pointer's ray enters first (moving bodies before fixed ones,
  // whose spheres, a wall's or a floor's, can be large); its name is shown as text.
  var ray = new THREE.Raycaster();
  var pointer = new THREE.Vector2();
  function hover(e) {
    var rect = canvas.getBoundingClientRect();
    pointer.set((e.clientX - rect.left) / rect.width * 2 - 1, -(e.clientY - rect.top) / rect.height * 2 + 1);
    ray.setFromCamera(pointer, camera);
    var o = ray.ray.origin, d = ray.ray.direction, best = -1, bestKey = Infinity;
    for (var i = 0; i < n; i++) {
      var r = meta.radii[i];
      if (!(r > 0)) continue;
      var cx = current[i * 7] - o.x, cy = current[i * 7 + 1] - o.y, cz = current[i * 7 + 2] - o.z;
      var along = cx * d.x + cy * d.y + cz * d.z;
      var off2 = cx * cx + cy * cy + cz * cz - along * along;
      if (off2 > r * r) continue;
      var enter = along - Math.sqrt(r * r - off2);
      if (enter < 0) continue;
      var key = enter + (meta.fixed[i] ? 1e12 : 0);
      if (key < bestKey) { bestKey = key; best = i; }
    }
    if (best < 0) { tip.hidden = true; return; }
    tip.textContent = meta.names[best];
    tip.style.left = (e.clientX + 12) + "px";
    tip.style.top = (e.clientY + 12) + "px";
    tip.hidden = false;
  }

  // ------------------------------------------------------------------ timeline
  var t = t0;
  var speed = 1;
  var playing = F > 1;
  var shownFrame = -1;
  function setPlaying(on) {
    playing = on && F > 1;
    state.playing = playing;
    playButton.textContent = playing ? "Pause" : "Play";
  }
  function seekFrame(k) {
    t = times[Math.min(Math.max(k, 0), F - 1)];
    dirty = true;
  }
  playButton.addEventListener("click", function () {
    if (!playing && t >= t1) t = t0;  // play again from the start
    setPlaying(!playing);
  });
  scrub.addEventListener("input", function () { seekFrame(parseInt(scrub.value, 10)); });
  speedSelect.addEventListener("change", function () { speed = parseFloat(speedSelect.value) || 1; });
  contactBox.addEventListener("change", function () {
    if (contactPoints) contactPoints.visible = contactLines.visible = contactBox.checked;
    contactFrame = -1;
    dirty = true;
  });
  byId("reset-view").addEventListener("click", resetView);
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "BUTTON" || tag === "TEXTAREA") return;
    if (e.key === " ") { e.preventDefault(); playButton.click(); }
    else if (e.key === "ArrowRight") { setPlaying(false); seekFrame(frameAt(t) + 1); }
    else if (e.key === "ArrowLeft") { setPlaying(false); seekFrame(frameAt(t) - 1); }
  });

  function resize() {
    var w = Math.max(window.innerWidth, 1), h = Math.max(window.innerHeight, 1);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
    if (renderer) renderer.setSize(w, h);
    dirty = true;
  }
  window.addEventListener("resize", resize);

  if (renderer) {
    renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    byId("view").appendChild(canvas);
  }
  resize();
  resetView();
  setPlaying(playing);

  var last = performance.now();
  function tick(now) {
    var dt = Math.min(Math.max((now - last) / 1000, 0), 0.1);  // a hidden tab must not jump ahead
    last = now;
    if (playing) {
      t += dt * speed;
      if (t > t1) {
        if (loopBox.checked) { t = t0 + ((t - t1) % Math.max(t1 - t0, 1e-9)); }
        else { t = t1; setPlaying(false); }
      }
      dirty = true;
    }
    if (dirty) {
      var k = interpolate(t);
      placeInstances();
      placeContacts(k);
      if (k !== shownFrame) {
        shownFrame = k;
        scrub.value = String(k);
        state.frame = k;
        root.dataset.frame = String(k);
      }
      state.time = t;
      timeLabel.textContent = "t = " + t.toFixed(3) + " s / " + t1.toFixed(3) + " s";
      if (renderer) {
        renderer.render(scene, camera);
        var drawn = 0;
        meshes.forEach(function (M) { if (M.mesh.visible) drawn += M.mesh.count; });
        state.drawn = drawn;
        state.renders += 1;
        root.dataset.drawn = String(drawn);
        root.dataset.renders = String(state.renders);
      }
      dirty = false;
      if (!state.ready) {
        state.ready = true;
        root.dataset.ready = "1";
      }
    }
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
})();
