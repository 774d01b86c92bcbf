/**
 * `{embed_url}/widget.js`: the launcher a merchant page includes with
 * `<script src="{embed_url}/widget.js" data-embed-key="ek_…" data-channel="WEB">`.
 * It mounts the iframe `{embed_url}/embed/<key>?channel=…&parent=<page origin>`
 * after the script tag, resizes it on `svc:resize`, relays the widget's other
 * `svc:*` messages to the page as DOM events on the script's parent element
 * (bubbling, `detail` = the message), and passes `svc:kyc-complete` from the
 * page (`element.dispatchEvent(new CustomEvent("svc:kyc-complete"))`) to the
 * widget. Only messages from the widget's own origin are read; messages go to
 * that origin only. Plain ES2017, no dependencies: it runs on every merchant page.
 */
export const WIDGET_SCRIPT = `(function () {
  var script = document.currentScript;
  if (!script) return;
  var key = script.getAttribute("data-embed-key");
  if (!key) { console.error("svc widget: data-embed-key is missing"); return; }
  var channels = ["WEB", "IOS", "ANDROID", "PARTNER_WEBVIEW"];
  var channel = script.getAttribute("data-channel") || "WEB";
  if (channels.indexOf(channel) < 0) channel = "WEB";
  var origin = new URL(script.src).origin;
  var frame = document.createElement("iframe");
  frame.src = origin + "/embed/" + encodeURIComponent(key) + "?channel=" + channel + "&parent=" + encodeURIComponent(location.origin);
  frame.title = "Credit";
  frame.setAttribute("allow", "clipboard-write");
  frame.style.cssText = "width:100%;min-width:320px;border:0;height:560px;display:block";
  var host = script.parentElement || document.body;
  host.insertBefore(frame, script.nextSibling);
  window.addEventListener("message", function (event) {
    if (event.origin !== origin || event.source !== frame.contentWindow) return;
    var data = event.data;
    if (!data || typeof data.type !== "string" || data.type.indexOf("svc:") !== 0) return;
    if (data.type === "svc:resize" && typeof data.height === "number") {
      frame.style.height = Math.max(200, Math.min(2000, Math.round(data.height))) + "px";
      return;
    }
    host.dispatchEvent(new CustomEvent(data.type, { detail: data, bubbles: true }));
  });
  host.addEventListener("svc:kyc-complete", function (event) {
    if (event.detail && event.detail.type) return; // our own relay of a widget message
    frame.contentWindow && frame.contentWindow.postMessage({ type: "svc:kyc-complete" }, origin);
  });
})();
`;
