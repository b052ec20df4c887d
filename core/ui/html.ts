// Markup for views without a build step of their own: htm's tagged templates
// bound to Preact (html`<p>${text}</p>`), which escape what they interpolate.
import htm from "htm";
import { h } from "preact";

export const html = htm.bind(h);
