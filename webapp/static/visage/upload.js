/* The upload page: pick or drop the files (one or more photos of the face, one target), preview them, find the target's faces, price the job live,
   and submit to /api/v1/jobs so a 400's per-field `errors` show next to the field while both chosen
   files stay selected. Without JavaScript the form posts to the site view instead. */
"use strict";
(function () {
  var form = document.getElementById("upload-form");
  if (!form) return;

  var maxBytes = Number(form.dataset.maxBytes);
  var formError = document.getElementById("form-error");
  var faceIndex = document.getElementById("face_index");
  var facesStatus = document.getElementById("faces-status");
  var facesError = document.getElementById("faces-error");
  var submit = document.getElementById("submit-swap");
  var quoteBox = document.getElementById("quote");
  var quoteAmount = document.getElementById("quote-amount");
  var quoteNote = document.getElementById("quote-note");
  var quoteAvailable = document.getElementById("quote-available");
  var targetSize = null; // {width, height, frames} read from the chosen target in the browser
  var targetFile = null; // the chosen target: the first quote sends it, so the server measures it
  var measured = null;   // {width, height, frames, kind} as the server measured the target
  var quoteSeq = 0;
  var facesSeq = 0;
  var WHAT = { source: gettext("face photo"), target: gettext("target") };
  // Problems found before submitting (no face, face too small): the Swap button says why it is off.
  // The server checks again; moderation lists are never checked here.
  var faceProblems = { source: "", target: "" };
  var TARGET_UNUSABLE = gettext("the photo or video to put the face in can’t be used (see why next to it).");
  var submitReason = document.getElementById("submit-reason");
  var isBusy = false;
  function updateSubmit() {
    var reason = faceProblems.source || faceProblems.target;
    submit.disabled = isBusy || !!reason;
    submitReason.textContent = reason && !isBusy ? interpolate(gettext("Swap is off: %(reason)s"), { reason: reason }, true) : "";
  }

  function mb(bytes) {
    if (bytes < 1048576) return Math.max(1, Math.round(bytes / 1024)) + " KB";
    return (bytes / 1048576).toFixed(bytes < 10485760 ? 1 : 0) + " MB";
  }
  function money(value) { var n = Number(value); return isNaN(n) ? value : n.toFixed(2); }
  function headers() { return { "X-CSRFToken": Visage.csrfToken(), Accept: "application/json" }; }

  // --- the two file fields ------------------------------------------------------------------------
  function field(name) {
    var root = document.getElementById(name + "-field");
    return {
      root: root,
      input: root.querySelector('input[type="file"]'),
      dropzone: root.querySelector('[data-role="dropzone"]'),
      preview: root.querySelector('[data-role="preview"]'),
      img: root.querySelector('[data-role="preview-img"]'),
      fileName: root.querySelector('[data-role="file-name"]'),
      error: root.querySelector('[data-role="error"]'),
      boxes: root.querySelector('[data-role="boxes"]'),
      thumbs: root.querySelector('[data-role="thumbs"]'),
      change: root.querySelector('[data-role="change"]'),
      url: null,
    };
  }
  var fields = { source: field("source"), target: field("target") };
  // Several photos of the same face: kept here (the input's own list is replaced by each pick) and
  // copied back into the input, so the no-JS form post and FormData see them all.
  var maxSources = Number(fields.source.input.dataset.maxFiles || 1);
  var sourceFiles = [];
  var thumbUrls = [];

  function setError(name, message) {
    var f = fields[name];
    f.error.textContent = message || "";
    f.root.classList.toggle("field-invalid", !!message);
    if (message) f.input.setAttribute("aria-invalid", "true"); else f.input.removeAttribute("aria-invalid");
  }

  function accepted(input) { return input.accept.split(",").map(function (t) { return t.trim(); }); }

  /* Client-side checks (type, size, how many); the server checks everything again. */
  function checkFile(name) {
    if (name === "source") {
      if (!sourceFiles.length) return gettext("Choose a photo of the face to use.");
      if (sourceFiles.length > maxSources) return tooMany(sourceFiles.length);
      for (var i = 0; i < sourceFiles.length; i++) {
        var problem = checkOne(name, sourceFiles[i]);
        if (problem) return problem;
      }
      return "";
    }
    var file = fields[name].input.files[0];
    if (!file) return gettext("Choose the photo to put the face in.");
    return checkOne(name, file);
  }

  function tooMany(count) {
    return count ? interpolate(gettext("Choose at most %(max)s photos of the face, not %(count)s."), { max: maxSources, count: count }, true)
      : interpolate(gettext("Choose at most %(max)s photos of the face."), { max: maxSources }, true);
  }

  function checkOne(name, file) {
    var types = accepted(fields[name].input);
    if (types.indexOf(file.type) === -1) {
      var allowed = types.some(function (t) { return t.indexOf("video/") === 0; })
        ? gettext("a JPEG, PNG, WebP, HEIC or AVIF photo, or an MP4, MOV or WebM video") : gettext("a JPEG, PNG, WebP, HEIC or AVIF photo");
      return interpolate(gettext("“%(name)s” is not %(allowed)s. Choose %(allowed)s."), { name: file.name, allowed: allowed }, true);
    }
    if (file.size === 0) return interpolate(gettext("“%(name)s” is empty."), { name: file.name }, true);
    if (file.size > maxBytes) return interpolate(gettext("“%(name)s” is %(size)s; the limit is %(limit)s."), { name: file.name, size: mb(file.size), limit: mb(maxBytes) }, true);
    return "";
  }

  function showEmpty(name) {
    var f = fields[name];
    f.preview.hidden = true;
    f.dropzone.hidden = false;
  }

  function showPreview(name, file) {
    var f = fields[name];
    if (f.url) URL.revokeObjectURL(f.url);
    f.url = URL.createObjectURL(file);
    f.fileName.textContent = file.name + " · " + mb(file.size);
    f.preview.classList.remove("preview-unavailable");
    var frame = f.img.parentNode;
    var old = frame.querySelector("video");
    if (old) old.remove();
    if (file.type.indexOf("video/") === 0) {
      var video = document.createElement("video");
      video.muted = true; video.playsInline = true; video.preload = "metadata"; video.controls = true;
      video.setAttribute("aria-label", f.img.alt);
      video.src = f.url;
      f.img.hidden = true;
      frame.insertBefore(video, f.img);
      video.addEventListener("loadedmetadata", function () {
        if (name === "target") {
          // The quote needs a frame count; 30 fps is the estimate until the server measures the file.
          targetFile = file;
          setTarget({ width: video.videoWidth, height: video.videoHeight, frames: Math.max(1, Math.round(video.duration * 30)) });
          facesStatus.textContent = gettext("Faces are found in each frame of a video; the largest face is replaced.");
        }
      });
    } else {
      f.img.hidden = false;
      f.img.onload = function () {
        if (name === "target") { targetFile = file; setTarget({ width: f.img.naturalWidth, height: f.img.naturalHeight, frames: 1 }); }
      };
      f.img.onerror = function () { f.preview.classList.add("preview-unavailable"); };
      f.img.src = f.url;
      if (name === "target") detectFaces(file);
    }
    f.dropzone.hidden = true;
    f.preview.hidden = false;
  }

  // --- several photos of the face ------------------------------------------------------------------
  function sameFile(a, b) { return a.name === b.name && a.size === b.size && a.lastModified === b.lastModified; }

  /* Adds picked or dropped photos to the chosen ones: each is checked, duplicates are skipped, and
     the count stops at maxSources; what was left out is said next to the field. */
  function addSources(files) {
    var problems = [];
    var over = 0;
    Array.prototype.forEach.call(files, function (file) {
      if (sourceFiles.some(function (kept) { return sameFile(kept, file); })) return;
      var problem = checkOne("source", file);
      if (problem) { problems.push(problem); return; }
      if (sourceFiles.length >= maxSources) { over++; return; }
      sourceFiles.push(file);
    });
    if (over) problems.push(interpolate(ngettext(
      "You can add up to %(max)s photos of the same person; %(over)s was left out.",
      "You can add up to %(max)s photos of the same person; %(over)s were left out.", over), { max: maxSources, over: over }, true));
    return problems.join(" ");
  }

  function syncSourceInput() {
    var list = new DataTransfer();
    sourceFiles.forEach(function (file) { list.items.add(file); });
    fields.source.input.files = list.files;
  }

  function removeSource(index) {
    sourceFiles.splice(index, 1);
    syncSourceInput();
    setError("source", "");
    renderSources();
    checkSourceFaces();
    var next = fields.source.thumbs && fields.source.thumbs.querySelector(".thumb-remove");
    (next || fields.source.input).focus();
  }

  function renderSources() {
    var f = fields.source;
    thumbUrls.forEach(function (url) { URL.revokeObjectURL(url); });
    thumbUrls = [];
    planChanged();
    if (!sourceFiles.length) { showEmpty("source"); return; }
    showPreview("source", sourceFiles[0]);
    if (sourceFiles.length > 1) {
      var bytes = sourceFiles.reduce(function (sum, file) { return sum + file.size; }, 0);
      f.fileName.textContent = interpolate(gettext("%(count)s photos of the face · %(size)s"), { count: sourceFiles.length, size: mb(bytes) }, true);
    }
    if (f.change) f.change.textContent = maxSources > 1 && sourceFiles.length < maxSources ? gettext("Add photos") : gettext("Change");
    if (f.change) f.change.hidden = maxSources > 1 && sourceFiles.length >= maxSources;
    if (!f.thumbs) return;
    f.thumbs.innerHTML = "";
    f.thumbs.hidden = maxSources < 2;
    sourceFiles.forEach(function (file, index) {
      var url = URL.createObjectURL(file);
      thumbUrls.push(url);
      var item = document.createElement("li");
      item.className = "thumb" + (index === 0 ? " thumb-main" : "");
      var img = document.createElement("img");
      img.alt = interpolate(gettext("Face photo %(number)s: %(name)s"), { number: index + 1, name: file.name }, true);
      img.src = url;
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "thumb-remove";
      remove.setAttribute("aria-label", interpolate(gettext("Remove face photo %(number)s (%(name)s)"), { number: index + 1, name: file.name }, true));
      remove.innerHTML = '<span aria-hidden="true">✕</span>';
      remove.addEventListener("click", function () { removeSource(index); });
      item.appendChild(img);
      item.appendChild(remove);
      f.thumbs.appendChild(item);
    });
    if (sourceFiles.length < maxSources) {
      var add = document.createElement("li");
      add.className = "thumb thumb-add";
      add.innerHTML = '<label for="id_source"><span aria-hidden="true">+</span><span class="visually-hidden">' + gettext("Add another photo of the same person") + '</span></label>';
      f.thumbs.appendChild(add);
    }
  }

  // --- early face checks on the face photos ------------------------------------------------------------
  var sourceChecks = new Map(); // File -> Promise of "" (fine) or a problem sentence
  var sourceSeq = 0;
  var lastFaceError = "";

  function checkSourceFace(file) {
    if (sourceChecks.has(file)) return sourceChecks.get(file);
    var body = new FormData();
    body.append("image", file);
    body.append("field", "source");
    var check = fetch(form.dataset.facesUrl, { method: "POST", body: body, headers: headers(), credentials: "same-origin" })
      .then(function (response) {
        return response.json().then(function (data) {
          if (!response.ok) {
            var messages = (data.errors && (data.errors.source || data.errors.image)) || [data.detail];
            return messages.join(" ");
          }
          if (!data.faces.length) return interpolate(gettext("We couldn’t find a face in “%(name)s”. Choose a photo where one face is clearly visible."), { name: file.name }, true);
          var largest = Math.max.apply(null, data.faces.map(function (f) { return Math.min(f.box[2] - f.box[0], f.box[3] - f.box[1]); }));
          if (largest < data.min_face_px) {
            return interpolate(gettext("The face in “%(name)s” is too small (%(size)s px across; at least %(min)s px). "
              + "Choose a closer photo of the face."), { name: file.name, size: Math.round(largest), min: data.min_face_px }, true);
          }
          return "";
        });
      })
      .catch(function () { return ""; }); // no answer: the server still checks on submit
    sourceChecks.set(file, check);
    return check;
  }

  async function checkSourceFaces() {
    var seq = ++sourceSeq;
    var files = sourceFiles.slice();
    if (!files.length) { faceProblems.source = ""; updateSubmit(); return; }
    var problems = (await Promise.all(files.map(checkSourceFace))).filter(Boolean);
    if (seq !== sourceSeq) return;
    faceProblems.source = problems.length ? (files.length > 1 ? gettext("a face photo has no usable face.") : gettext("the face photo has no usable face.")) : "";
    var shown = fields.source.error.textContent;
    if (problems.length) { lastFaceError = problems.join(" "); setError("source", lastFaceError); }
    else if (shown && shown === lastFaceError) setError("source", "");
    updateSubmit();
  }

  /* The source input changed (picked, dropped, or restored): add its files to the chosen ones. */
  function sourcesChosen(files) {
    setError("source", "");
    formError.hidden = true;
    if (maxSources < 2 && files.length) sourceFiles = []; // one photo only: a new pick replaces it
    var problem = addSources(files);
    syncSourceInput();
    renderSources();
    if (problem) setError("source", problem);
    checkSourceFaces();
  }

  function chosen(name) {
    if (name === "source") { sourcesChosen(fields.source.input.files); return; }
    var f = fields[name];
    var file = f.input.files[0];
    setError(name, "");
    formError.hidden = true;
    if (name === "target") { clearFaces(); targetFile = null; setTarget(null); }
    if (!file) { showEmpty(name); return; }
    var problem = checkFile(name);
    if (problem) {
      setError(name, problem);
      showEmpty(name);
      if (name === "target") {
        facesStatus.textContent = gettext("Choose a target photo and we’ll find its faces.");
        faceProblems.target = TARGET_UNUSABLE;
        updateSubmit();
      }
      return;
    }
    showPreview(name, file);
  }

  Object.keys(fields).forEach(function (name) {
    var f = fields[name];
    f.input.addEventListener("change", function () { chosen(name); });
    var depth = 0;
    f.root.addEventListener("dragenter", function (e) { e.preventDefault(); depth++; f.root.classList.add("is-dragging"); });
    f.root.addEventListener("dragover", function (e) { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; });
    f.root.addEventListener("dragleave", function () { if (--depth <= 0) { depth = 0; f.root.classList.remove("is-dragging"); } });
    f.root.addEventListener("drop", function (e) {
      e.preventDefault();
      depth = 0;
      f.root.classList.remove("is-dragging");
      if (!e.dataTransfer.files.length) return;
      if (name === "source") { sourcesChosen(e.dataTransfer.files); return; }
      var list = new DataTransfer();
      list.items.add(e.dataTransfer.files[0]);
      f.input.files = list.files;
      chosen(name);
    });
  });
  // A file dropped next to a zone must not make the browser navigate away from the form.
  window.addEventListener("dragover", function (e) { e.preventDefault(); });
  window.addEventListener("drop", function (e) { e.preventDefault(); });

  // --- faces in the target ------------------------------------------------------------------------
  function facesRadio(value) { return form.querySelector('input[name="faces"][value="' + value + '"]:not([data-picked]):not([data-map])'); }
  var targetFaces = []; // the faces found in the target photo, largest first: [{index, box}]
  var referenceIndex = document.getElementById("reference_face_index");
  var referenceChoice = document.getElementById("reference-choice");
  var mapChoice = document.getElementById("map-choice");
  var faceMap = document.getElementById("face-map");

  /* Which face choice is on: "largest", "every", "picked" (one face clicked on the photo),
     "reference" (everyone who looks like the clicked face) or "map" (a photo for each face). */
  function plan() {
    var checked = form.querySelector('input[name="faces"]:checked');
    if (!checked) return "largest";
    if (checked.hasAttribute("data-picked")) return "picked";
    if (checked.hasAttribute("data-map")) return "map";
    return { one: "largest", many: "every", reference: "reference" }[checked.value];
  }

  function clearFaces() {
    facesSeq++;
    faceProblems.target = "";
    updateSubmit();
    if (fields.target.boxes) fields.target.boxes.innerHTML = "";
    targetFaces = [];
    pickFace(null);
    planChanged();
  }

  function pickFace(index) {
    faceIndex.value = index === null ? "" : String(index);
    var boxes = fields.target.boxes ? fields.target.boxes.querySelectorAll(".face-box") : [];
    Array.prototype.forEach.call(boxes, function (box) {
      box.setAttribute("aria-pressed", String(Number(box.dataset.index) === index));
    });
    var chip = document.getElementById("face-chip");
    if (chip) chip.remove();
    // The picked face is its own choice, so "The largest face" is never shown selected beside it.
    var pickedChoice = document.getElementById("picked-choice");
    var pickedRadio = document.getElementById("picked-radio");
    if (index === null) {
      if (pickedRadio.checked) facesRadio("one").checked = true;
      pickedChoice.hidden = true;
    } else {
      document.getElementById("picked-text").textContent = interpolate(gettext("Face %(number)s, picked on the photo"), { number: index + 1 }, true);
      pickedChoice.hidden = false;
      pickedRadio.checked = true;
    }
    if (index !== null) {
      chip = document.createElement("p");
      chip.id = "face-chip";
      chip.innerHTML = '<span class="face-chip"></span>';
      chip.firstChild.textContent = interpolate(gettext("Face %(number)s will be replaced"), { number: index + 1 }, true) + " ";
      var undo = document.createElement("button");
      undo.type = "button";
      undo.setAttribute("aria-label", gettext("Undo: replace the largest face instead"));
      undo.textContent = "✕";
      chip.firstChild.appendChild(undo);
      chip.querySelector("button").addEventListener("click", function () { pickFace(null); });
      facesStatus.after(chip);
    }
    facesError.textContent = "";
  }

  form.querySelectorAll('input[name="faces"]:not([data-picked])').forEach(function (radio) {
    radio.addEventListener("change", function () {
      var picked = faceIndex.value;
      pickFace(null);
      // A face clicked before choosing "everyone who looks like…" is the person to match.
      if (plan() === "reference" && picked && !referenceIndex.value) referenceIndex.value = picked;
      planChanged();
    });
  });

  // --- creative controls: match a person, or a different photo for each face ----------------------
  function faceClicked(index) {
    var current = plan();
    if (current === "reference") { setReference(referenceIndex.value === String(index) ? null : index); return; }
    if (current === "map") { cycleMap(index); return; }
    pickFace(faceIndex.value === String(index) ? null : index);
  }

  /* Called whenever the faces, the source photos or the choice change: shows the choices that make
     sense (matching a person needs 2 faces; a photo for each face needs 2 faces and 2 photos),
     and the state of the one that is on. */
  function planChanged() {
    var several = targetFaces.length > 1;
    referenceChoice.hidden = !several;
    mapChoice.hidden = !(several && sourceFiles.length > 1);
    if ((referenceChoice.hidden && plan() === "reference") || (mapChoice.hidden && plan() === "map")) {
      facesRadio("one").checked = true;
    }
    if (plan() !== "reference") referenceIndex.value = "";
    renderMap();
    if (plan() === "reference") setReference(referenceIndex.value === "" ? null : Number(referenceIndex.value));
    else if (plan() === "map") facesStatus.textContent = gettext("Choose a photo for each face, here or by clicking the faces on the photo. "
      + "Each photo is a different person; faces you keep are left as they are.");
    else if (plan() !== "picked") labelBoxes();
  }

  function setReference(index) {
    referenceIndex.value = index === null ? "" : String(index);
    labelBoxes();
    facesStatus.textContent = index === null
      ? gettext("Click the person to match on the photo: everyone who looks like them is replaced.")
      : interpolate(gettext("Everyone who looks like face %(number)s will be replaced (face %(number)s too)."), { number: index + 1 }, true);
    facesError.textContent = "";
  }

  function sourceName(index) { return "Photo " + (index + 1) + " · " + sourceFiles[index].name; }

  function mapping() {
    return Array.prototype.map.call(faceMap.querySelectorAll("select"), function (select) {
      return select.value === "" ? null : { face: Number(select.dataset.face), source: Number(select.value) };
    }).filter(Boolean);
  }

  function renderMap() {
    var kept = {};
    mapping().forEach(function (pair) { kept[pair.face] = pair.source; });
    faceMap.innerHTML = "";
    faceMap.hidden = plan() !== "map";
    if (faceMap.hidden) return;
    targetFaces.forEach(function (face, order) {
      var row = document.createElement("label");
      row.className = "face-map-row";
      row.appendChild(document.createTextNode(interpolate(gettext("Face %(number)s"), { number: face.index + 1 }, true)));
      var select = document.createElement("select");
      select.dataset.face = face.index;
      select.setAttribute("aria-label", interpolate(gettext("Photo for face %(number)s"), { number: face.index + 1 }, true));
      var keep = document.createElement("option");
      keep.value = "";
      keep.textContent = gettext("Keep this face");
      select.appendChild(keep);
      sourceFiles.forEach(function (file, source) {
        var option = document.createElement("option");
        option.value = String(source);
        option.textContent = sourceName(source);
        select.appendChild(option);
      });
      // Kept choices stay; new faces get the photos in order (face 1 ← photo 1, face 2 ← photo 2…).
      var initial = face.index in kept ? kept[face.index] : (order < sourceFiles.length ? order : null);
      select.value = initial === null || initial >= sourceFiles.length ? "" : String(initial);
      select.addEventListener("change", function () { labelBoxes(); facesError.textContent = ""; });
      row.appendChild(select);
      faceMap.appendChild(row);
    });
    labelBoxes();
  }

  function cycleMap(index) {
    var select = faceMap.querySelector('select[data-face="' + index + '"]');
    if (!select) return;
    select.selectedIndex = (select.selectedIndex + 1) % select.options.length;
    select.dispatchEvent(new Event("change"));
  }

  /* The boxes on the photo say what happens to each face under the current choice. */
  function labelBoxes() {
    var current = plan();
    var assigned = {};
    if (current === "map") mapping().forEach(function (pair) { assigned[pair.face] = pair.source; });
    var boxes = fields.target.boxes ? fields.target.boxes.querySelectorAll(".face-box") : [];
    Array.prototype.forEach.call(boxes, function (box) {
      var index = Number(box.dataset.index);
      var label = String(index + 1);
      var name;
      var pressed;
      if (current === "map") {
        pressed = index in assigned;
        if (pressed) label += " ← " + (assigned[index] + 1);
        name = pressed
          ? interpolate(gettext("Face %(number)s: photo %(photo)s (click to change)"), { number: index + 1, photo: assigned[index] + 1 }, true)
          : interpolate(gettext("Face %(number)s: kept (click to change)"), { number: index + 1 }, true);
      } else if (current === "reference") {
        pressed = referenceIndex.value === String(index);
        name = interpolate(gettext("Match everyone who looks like face %(number)s"), { number: index + 1 }, true);
      } else {
        pressed = faceIndex.value === String(index);
        name = index === 0 ? interpolate(gettext("Replace face %(number)s (the largest)"), { number: index + 1 }, true) : interpolate(gettext("Replace face %(number)s"), { number: index + 1 }, true);
      }
      box.setAttribute("aria-pressed", String(pressed));
      box.setAttribute("aria-label", name);
      box.querySelector("span").textContent = label;
    });
  }

  async function detectFaces(file) {
    var seq = ++facesSeq;
    facesStatus.textContent = gettext("Looking for faces in the target photo…");
    var body = new FormData();
    body.append("image", file);
    body.append("field", "target");
    try {
      var response = await fetch(form.dataset.facesUrl, { method: "POST", body: body, headers: headers(), credentials: "same-origin" });
      var data = await response.json();
      if (seq !== facesSeq) return;
      if (!response.ok) {
        facesStatus.textContent = gettext("We couldn’t look for faces in this file.");
        var messages = (data.errors && (data.errors.target || data.errors.image)) || [data.detail];
        // A submit's answer may already be showing; it says the same thing more precisely.
        if (!fields.target.error.textContent) setError("target", messages.join(" "));
        faceProblems.target = TARGET_UNUSABLE;  // off, as for a face photo the server refuses
        updateSubmit();
        return;
      }
      drawFaces(data);
    } catch (e) {
      if (seq === facesSeq) facesStatus.textContent = gettext("We couldn’t look for faces right now; the largest face will be replaced.");
    }
  }

  function drawFaces(data) {
    var layer = fields.target.boxes;
    layer.innerHTML = "";
    var count = data.faces.length;
    if (!count) {
      facesStatus.textContent = gettext("We found no face in this photo. A swap needs a clear, front-facing face — try another photo.");
      setError("target", gettext("We couldn’t find a face in this photo to replace. Choose a photo where a face is clearly visible."));
      faceProblems.target = gettext("the photo to put the face in has no face we can find.");
      updateSubmit();
      return;
    }
    data.faces.forEach(function (face) {
      var b = face.box;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "face-box";
      button.dataset.index = face.index;
      button.setAttribute("aria-pressed", "false");
      button.setAttribute("aria-label", face.index === 0
        ? interpolate(gettext("Replace face %(number)s (the largest)"), { number: face.index + 1 }, true)
        : interpolate(gettext("Replace face %(number)s"), { number: face.index + 1 }, true));
      button.style.left = (100 * b[0] / data.width) + "%";
      button.style.top = (100 * b[1] / data.height) + "%";
      button.style.width = (100 * (b[2] - b[0]) / data.width) + "%";
      button.style.height = (100 * (b[3] - b[1]) / data.height) + "%";
      button.innerHTML = "<span aria-hidden=\"true\">" + (face.index + 1) + "</span>";
      button.addEventListener("click", function () { faceClicked(face.index); });
      layer.appendChild(button);
    });
    targetFaces = data.faces;
    facesStatus.textContent = count === 1
      ? gettext("Found 1 face. It will be replaced.")
      : interpolate(gettext("Found %(count)s faces, numbered largest first. Click one to replace only that face, or choose an option above."), { count: count }, true);
    if (count > 1) planChanged();
  }

  // --- live quote ----------------------------------------------------------------------------------
  function setTarget(size) { targetSize = size; measured = null; updateQuote(); }

  function topUpLink(url) {
    var link = document.createElement("a");
    link.href = url || "/account/credits/";
    link.textContent = gettext("Add credits");
    link.className = "top-up-link";
    return link;
  }

  async function cheapestQuote(target) {
    if (!target) return null;
    try {
      var response = await fetch(form.dataset.quoteUrl, {
        method: "POST", credentials: "same-origin",
        headers: Object.assign({ "Content-Type": "application/json" }, headers()),
        body: JSON.stringify({ width: target.width, height: target.height, frames: target.frames, kind: target.kind,
                               mode: "fast", resolution: "720p" }),
      });
      return response.ok ? await response.json() : null;
    } catch (e) {
      return null;
    }
  }

  /* One price everywhere: the first quote sends the target file, so the server measures it exactly
     as it will when the swap is submitted (frame count of a video included); later changes of
     quality or resolution send the measured numbers. Same inputs, same function, same price. */
  async function updateQuote() {
    var seq = ++quoteSeq;
    quoteBox.classList.remove("is-short");
    if (!targetSize) {
      quoteAmount.textContent = "—";
      quoteNote.textContent = gettext("Choose a target photo to see the price.");
      return;
    }
    var mode = form.querySelector('input[name="mode"]:checked').value;
    var resolution = form.querySelector('input[name="resolution"]:checked').value;
    var init = { method: "POST", credentials: "same-origin" };
    if (measured || !targetFile) {
      var size = measured || targetSize;
      init.headers = Object.assign({ "Content-Type": "application/json" }, headers());
      init.body = JSON.stringify({ width: size.width, height: size.height, frames: size.frames, kind: size.kind,
                                   mode: mode, resolution: resolution });
    } else {
      var data = new FormData();
      data.append("target", targetFile);
      data.append("mode", mode);
      data.append("resolution", resolution);
      init.headers = headers();
      init.body = data;
    }
    quoteNote.textContent = gettext("Pricing…");
    try {
      var response = await fetch(form.dataset.quoteUrl, init);
      var q = await response.json();
      if (seq !== quoteSeq) return;
      if (!response.ok) { quoteAmount.textContent = "—"; quoteNote.textContent = q.detail || gettext("No price for this file."); return; }
      if (q.target) measured = q.target;
      quoteAmount.textContent = interpolate(gettext("%(amount)s credits"), { amount: q.amount }, true);
      quoteAmount.dataset.amount = q.amount;
      quoteAvailable.textContent = interpolate(gettext("%(amount)s credits"), { amount: q.available }, true);
      if (q.sufficient) {
        quoteNote.textContent = gettext("The most you pay: less if it takes less work, nothing if it fails.")
          + (q.mode !== q.mode_requested ? " " + interpolate(gettext("This server runs %(requested)s as %(mode)s, so it is priced as %(mode)s."), { requested: q.mode_requested, mode: q.mode }, true) : "");
      } else {
        quoteBox.classList.add("is-short");
        quoteNote.textContent = gettext("Not enough credits for this swap: ");
        quoteNote.appendChild(topUpLink(q.links && q.links.top_up));
        quoteNote.appendChild(document.createTextNode("."));
        // Suggest another choice only when one costs less (on a small photo all may cost the minimum).
        var cheapest = await cheapestQuote(q.target);
        if (seq === quoteSeq && cheapest && Number(cheapest.amount) < Number(q.amount)) {
          quoteNote.appendChild(document.createTextNode(
            " " + interpolate(gettext("Or choose a lower quality or resolution: from %(amount)s credits."), { amount: cheapest.amount }, true)));
        }
      }
    } catch (e) {
      if (seq === quoteSeq) quoteNote.textContent = gettext("We couldn’t get a price right now.");
    }
  }
  form.querySelectorAll('input[name="mode"], input[name="resolution"]').forEach(function (radio) {
    radio.addEventListener("change", updateQuote);
  });

  // --- submit ----------------------------------------------------------------------------------------
  var ERROR_SLOTS = { source: "source", target: "target", mode: "mode-error", resolution: "resolution-error",
                      faces: "faces-error", face_index: "faces-error", reference_face_index: "faces-error",
                      face_sources: "faces-error",
                      consent: "consent-error" };

  function clearErrors() {
    setError("source", ""); setError("target", "");
    ["mode-error", "resolution-error", "faces-error", "consent-error"].forEach(function (id) { document.getElementById(id).textContent = ""; });
    formError.hidden = true;
    formError.textContent = "";
  }

  function showFormError(message) {
    formError.textContent = message;
    formError.hidden = false;
    formError.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function showProblem(problem) {
    var shown = false;
    var first = null;
    Object.keys(problem.errors || {}).forEach(function (key) {
      var message = [].concat(problem.errors[key]).join(" ");
      var slot = ERROR_SLOTS[key];
      if (slot === "source" || slot === "target") { setError(slot, message); first = first || fields[slot].input; shown = true; }
      else if (slot) { document.getElementById(slot).textContent = message; shown = true; }
    });
    if (!shown) {
      var text = problem.detail || problem.title || gettext("Something went wrong; please try again.");
      showFormError(text);
      if (problem.code === "insufficient_credits") {
        formError.appendChild(document.createTextNode(" "));
        formError.appendChild(topUpLink(problem.links && problem.links.top_up));
      }
    }
    if (first) first.focus();
  }

  function busy(on) {
    isBusy = on;
    updateSubmit();
    submit.classList.toggle("is-busy", on);
    submit.querySelector(".button-label").textContent = on ? gettext("Uploading") : gettext("Swap faces");
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    clearErrors();
    var problems = { source: checkFile("source"), target: checkFile("target") };
    var firstBad = null;
    ["source", "target"].forEach(function (name) {
      if (problems[name]) { setError(name, problems[name]); firstBad = firstBad || fields[name].input; }
    });
    if (firstBad) { firstBad.focus(); return; }

    var data = new FormData(form);
    data.delete("csrfmiddlewaretoken");
    data.delete("source");
    sourceFiles.forEach(function (file) { data.append("source", file); }); // the API takes `source` repeated
    if (!faceIndex.value) data.delete("face_index");
    var current = plan();
    if (current === "reference" && !referenceIndex.value) {
      facesError.textContent = gettext("Click the person to match on the photo, or choose another option.");
      facesError.scrollIntoView({ block: "nearest", behavior: "smooth" });
      return;
    }
    if (current !== "reference") data.delete("reference_face_index");
    if (current === "map") {
      var pairs = mapping();
      if (!pairs.length) {
        facesError.textContent = gettext("Choose a photo for at least one face, or choose another option.");
        facesError.scrollIntoView({ block: "nearest", behavior: "smooth" });
        return;
      }
      data.set("face_sources", JSON.stringify(pairs)); // faces stays "one": face_sources says which
    }
    busy(true);
    try {
      var response = await fetch(form.dataset.apiUrl, { method: "POST", body: data, headers: headers(), credentials: "same-origin" });
      var body = await response.json().catch(function () { return {}; });
      if (response.status === 201) {
        submit.querySelector(".button-label").textContent = "Starting";
        window.location.assign(body.urls.page);
        return;
      }
      showProblem(body);
    } catch (e) {
      showFormError(gettext("We couldn’t reach Visage. Check your connection and try again — your files are still selected."));
    }
    busy(false);
  });

  // Files kept by the browser across a back/forward navigation get their previews back.
  ["source", "target"].forEach(function (name) { if (fields[name].input.files.length) chosen(name); });
})();
