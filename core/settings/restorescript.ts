// /settings/restore.js: the upload of a backup with a progress bar. The form
// works without it (the browser posts it and waits); with it the file's size
// is held to the cap before anything is sent, the bytes sent are shown as
// they go, and the upload can be stopped (the server then removes what it
// had received). The answer comes as JSON: checked, the page is opened again
// at its confirmation; refused, the reason is shown where the form is.
const SCRIPT = `(() => {
  const form = document.getElementById("r-check");
  const input = document.getElementById("r-file");
  if (!form || !input || !window.XMLHttpRequest || !window.FormData) return;
  const box = document.getElementById("r-upload");
  const bar = document.getElementById("r-progress");
  const text = document.getElementById("r-progress-text");
  const stop = document.getElementById("r-abort");
  const error = document.getElementById("r-upload-error");
  const send = form.querySelector("button[type=submit]");
  const max = () => Number(form.dataset.max);
  const size = (n) => (n < 1048576 ? Math.max(1, Math.round(n / 1024)) + " KB" : (n / 1048576).toFixed(1) + " MB");
  const say = (m) => {
    error.textContent = m;
    error.hidden = !m;
  };
  const tooBig = (f) => f.name + " is " + size(f.size) + ", more than this page takes (" + size(max()) + "): put it in HEARTH_BACKUP_TO and pick it from the list, or run hearth restore on the server.";
  input.addEventListener("change", () => {
    const f = input.files && input.files[0];
    say(f && f.size > max() ? tooBig(f) : "");
  });
  form.addEventListener("submit", (e) => {
    const f = input.files && input.files[0];
    if (!f) return;
    e.preventDefault();
    if (f.size > max()) return say(tooBig(f));
    say("");
    const xhr = new XMLHttpRequest();
    // The form has a field named "action", which hides form.action.
    xhr.open("POST", form.getAttribute("action"));
    xhr.setRequestHeader("accept", "application/json");
    xhr.responseType = "json";
    const done = () => {
      box.hidden = true;
      send.disabled = false;
    };
    xhr.upload.onprogress = (p) => {
      if (!p.lengthComputable) return;
      bar.value = Math.round((p.loaded / p.total) * 100);
      text.textContent = "Sent " + size(p.loaded) + " of " + size(p.total) + ".";
    };
    xhr.upload.onload = () => {
      bar.value = 100;
      text.textContent = "Sent. Decrypting it and reading it through…";
      stop.hidden = true;
    };
    xhr.onload = () => {
      if (xhr.status === 200) return location.replace("/settings/restore?checked#confirm-title");
      done();
      const m = xhr.response && xhr.response.error ? xhr.response.error.message : "the server answered " + xhr.status;
      say("Not restored, nothing changed: " + m);
    };
    xhr.onerror = () => {
      done();
      say("The upload stopped: the connection was lost. Nothing changed.");
    };
    xhr.onabort = () => {
      done();
      say("Upload stopped. Nothing changed, and what was sent is removed.");
    };
    stop.onclick = () => xhr.abort();
    bar.value = 0;
    text.textContent = "Sending " + f.name + " (" + size(f.size) + ")…";
    stop.hidden = false;
    box.hidden = false;
    send.disabled = true;
    xhr.send(new FormData(form));
  });
})();
`;

export function restoreScript(): Response {
  return new Response(SCRIPT, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache", "x-content-type-options": "nosniff" } });
}
