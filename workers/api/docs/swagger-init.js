// Starts Swagger UI on the /docs page (served by the api worker; see workers/api/docs/docs-page.ts).
// A file of its own, not an inline script, so the page's CSP allows scripts from 'self' only.
// The documents come from the page's JSON data block (not executed, so outside script-src).
(() => {
  const config = JSON.parse(document.getElementById("docs-config").textContent);
  // The top bar's Swagger logo is an SVG with a <style> element, which `style-src 'self'` blocks: our name instead.
  const ownLogo = (system) => ({
    components: { Logo: () => system.React.createElement("span", { className: "svc-docs-logo" }, config.title) },
  });
  window.ui = SwaggerUIBundle({
    dom_id: "#swagger-ui",
    // The top bar's selector: one entry per document; `?urls.primaryName=<name>` opens another than the first.
    urls: config.urls,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl, ownLogo],
    layout: "StandaloneLayout",
    // Never send the documents to validator.swagger.io (the default): nothing leaves the page's origin.
    validatorUrl: null,
    // No `?url=`/`?configUrl=` from the address bar: the page shows our documents only.
    queryConfigEnabled: false,
  });
})();
