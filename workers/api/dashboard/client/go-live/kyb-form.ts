import { post } from "../api.ts";
import { el } from "../dom.ts";
import { field, form, input } from "../forms.ts";

type KybSubmission = { id: string; status: string; legalName: string; submittedAt: string };

/**
 * The KYB submission (`POST /v1/go-live/kyb`): company, registration number,
 * country and references to documents (kind, file name, SHA-256: the file
 * never leaves the browser; choosing it fills its name and digest). Every
 * rule is the API's: its messages show beside the fields they name.
 */
export function kybForm(onSubmitted: (kyb: KybSubmission) => void): HTMLElement {
  const documents = el("div", { class: "documents" });
  const documentsField = el(
    "fieldset",
    { class: "field", "data-field": "documents" },
    el("legend", {}, "Documents"),
    el("p", { id: "f-documents-error", class: "field-error", role: "alert", hidden: true }),
    el("p", { class: "hint" }, "References, not uploads: choose a file to fill its name and SHA-256 here, or type them."),
    documents,
  );
  let rows = 0;
  const addDocument = () => documents.append(documentRow(rows++));
  addDocument();
  const f = form(
    { label: "Business verification", submit: "Submit for verification" },
    [
      field("legalName", "Legal name", input({ autocomplete: "organization" })),
      field("registrationNumber", "Registration number", input()),
      field("country", "Country", input({ autocomplete: "country", maxlength: 2 }), "ISO 3166-1 alpha-2 code, e.g. DE."),
      documentsField,
      el("p", {}, el("button", { type: "button", class: "secondary", onclick: addDocument }, "Add another document")),
    ],
    async (data) => {
      const docs = [...documents.querySelectorAll<HTMLElement>(".document")].map((row) => {
        const value = (name: string) => row.querySelector<HTMLInputElement>(`[data-doc="${name}"]`)?.value ?? "";
        return { kind: value("kind"), fileName: value("fileName"), sha256: value("sha256") };
      });
      const kyb = await post<KybSubmission>("/go-live/kyb", {
        legalName: data.get("legalName"),
        registrationNumber: data.get("registrationNumber"),
        country: data.get("country"),
        documents: docs,
      });
      onSubmitted(kyb);
    },
  );
  return f;
}

function documentRow(n: number): HTMLElement {
  const kind = input({ "data-doc": "kind", value: n === 0 ? "certificate_of_incorporation" : "" });
  const fileName = input({ "data-doc": "fileName" });
  const sha256 = input({ "data-doc": "sha256", class: "mono", spellcheck: "false" });
  const file = el("input", { type: "file" });
  file.addEventListener("change", async () => {
    const chosen = file.files?.[0];
    if (!chosen) return;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await chosen.arrayBuffer()));
    fileName.value = chosen.name;
    sha256.value = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  });
  return el(
    "div",
    { class: "document" },
    field(`documents.${n}.file`, `Document ${n + 1}: file (stays on your computer)`, file),
    field(`documents.${n}.kind`, `Document ${n + 1}: kind`, kind),
    field(`documents.${n}.fileName`, `Document ${n + 1}: file name`, fileName),
    field(`documents.${n}.sha256`, `Document ${n + 1}: SHA-256`, sha256),
  );
}
