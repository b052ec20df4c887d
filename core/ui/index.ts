// `hearth/ui`: everything a view imports (docs/views.md). A view is a module
// in its plugin's folder whose default export is a component; the core
// bundles it with this module and serves it on a shell page. Preact and htm
// are re-exported so a view needs no build step and no package of its own.
export { h, Fragment, createContext, createRef, render, type ComponentChildren, type ComponentType, type VNode } from "preact";
export { useState, useEffect, useLayoutEffect, useMemo, useRef, useCallback, useReducer, useContext, useId, useErrorBoundary } from "preact/hooks";
export { html } from "./html.ts";
export { call, post, CallError, csrfToken } from "./call.ts";
export { live, onceLive, onConnection, type Change } from "./live.ts";
export { callAll, useQuery, type Query } from "./data.ts";
export { useParams, navigate } from "./location.ts";
export { toast, undoable, type ToastOptions } from "./toast.ts";
export { confirm, type ConfirmOptions } from "./dialog.ts";
export { Loading, Empty, Failure } from "./states.ts";
export { dateFormat, formatDate, prepareDates } from "./dates.ts";
export { SearchList, type SearchListProps } from "./list.ts";
export { MarkdownEditor, renderPreview, useAutosave, type Autosave } from "./editor.ts";
export { useKeys, shortcuts, type Shortcut } from "./keys.ts";
export { boot, bootPage } from "./boot.ts";
