// Trace viewers (reviews.md §19) for lazily loaded artifacts. reviews/pages/trace_viewers.py renders the
// same markup on the server; keep both in step (tests compare them).
(function (global) {
  "use strict";

  var TRUNCATION_BYTES = 2 * 1024 * 1024;
  var TRUNCATION_NOTE = "Showing the first 2 MiB; download the original artifact for the rest.";
  var ALERT_KEYS = ["issue", "issues", "error", "errors", "defect", "defects", "failure",
    "failures", "error_message"];

  function el(tag, attrs, children) {
    var node = global.document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (attrs[name] !== null && attrs[name] !== undefined) node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? global.document.createTextNode(child) : child);
    });
    return node;
  }

  function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  // Python truthiness, which the server renderer uses: empty arrays and objects count as absent.
  function truthy(value) {
    if (Array.isArray(value)) return value.length > 0;
    if (isObject(value)) return Object.keys(value).length > 0;
    return Boolean(value);
  }

  function isContainer(value) {
    return value !== null && typeof value === "object";
  }

  // RENDER_DEPTH of trace_viewers.py: a value nested deeper is shown as its text.
  var RENDER_DEPTH = 32;

  // atlas.jsonio.json_values.deeper_than: whether a container at ``depth`` or below it, ``room`` levels
  // or more down, holds anything.
  function deeperThan(value, room, depth) {
    if (!isContainer(value)) return false;
    var children = Array.isArray(value) ? value : Object.keys(value).map(function (k) { return value[k]; });
    if ((depth || 0) >= room) return children.length > 0;
    return children.some(function (child) { return deeperThan(child, room, (depth || 0) + 1); });
  }

  function parse(raw, room) {
    var value;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return { ok: false, value: null };
    }
    if (deeperThan(value, Math.max(room === undefined ? RENDER_DEPTH : room, 0), 0)) {
      return { ok: false, value: null };
    }
    return { ok: true, value: value };
  }

  function scalarText(value) {
    if (value === null || value === undefined) return "Not recorded";
    if (typeof value === "boolean") return value ? "Yes" : "No";
    if (typeof value === "number" || typeof value === "string") return String(value);
    return JSON.stringify(value);
  }

  function entryLabel(item, index) {
    if (isObject(item)) {
      if (Object.prototype.hasOwnProperty.call(item, "task_id")) {
        return "Task " + index + " · " + scalarText(item.task_id);
      }
      var keys = ["event", "type"];
      for (var i = 0; i < keys.length; i += 1) {
        if (Object.prototype.hasOwnProperty.call(item, keys[i])) {
          return "Event " + index + " · " + scalarText(item[keys[i]]);
        }
      }
    }
    return "Entry " + index;
  }

  function noneRecorded() {
    return el("span", { class: "tv-empty" }, ["None recorded"]);
  }

  function renderValue(value, depth) {
    depth = depth || 0;
    if (value === null || value === undefined) return el("span", { class: "tv-null" }, ["Not recorded"]);
    if (typeof value === "boolean") return el("span", { class: "tv-bool" }, [value ? "Yes" : "No"]);
    if (typeof value === "number") return el("span", { class: "tv-number" }, [String(value)]);
    if (typeof value === "string") return renderString(value, depth);
    if (Array.isArray(value)) return renderList(value, depth);
    return renderObject(value, depth);
  }

  function renderString(value, depth) {
    var stripped = value.trim();
    if (stripped.charAt(0) === "{" || stripped.charAt(0) === "[") {
      var parsed = parse(stripped, RENDER_DEPTH - depth);
      if (parsed.ok && isContainer(parsed.value)) return renderValue(parsed.value, depth);
    }
    if (value.indexOf("\n") !== -1) return el("pre", { class: "tv-text" }, [value]);
    return el("span", { class: "tv-string" }, [value]);
  }

  function renderList(items, depth) {
    if (!items.length) return noneRecorded();
    if (items.some(isContainer)) {
      return el("div", { class: "tv-entries" }, items.map(function (item, i) {
        return el("details", { class: "tv-entry" }, [
          el("summary", null, [entryLabel(item, i + 1)]), renderValue(item, depth + 1),
        ]);
      }));
    }
    return el("ol", { class: "tv-list" }, items.map(function (item) {
      return el("li", null, [renderValue(item, depth + 1)]);
    }));
  }

  function renderObject(value, depth) {
    var keys = Object.keys(value);
    if (!keys.length) return noneRecorded();
    var children = [];
    keys.forEach(function (key) {
      var alert = ALERT_KEYS.indexOf(key.toLowerCase()) !== -1;
      children.push(el("dt", { class: alert ? "tv-key tv-alert" : "tv-key" }, [key]));
      children.push(el("dd", { class: alert ? "tv-alert" : null }, [renderValue(value[key], depth + 1)]));
    });
    return el("dl", { class: "tv-object" }, children);
  }

  function renderJsonl(content) {
    var entries = [];
    content.split("\n").forEach(function (rawLine, i) {
      var line = rawLine.replace(/\r$/, "");
      if (!line.trim()) return;
      var parsed = parse(line);
      var label = parsed.ok ? entryLabel(parsed.value, i + 1) : "Line " + (i + 1);
      var body = parsed.ok ? renderValue(parsed.value) : el("pre", { class: "tv-text" }, [line]);
      entries.push(el("details", { class: "tv-entry" }, [el("summary", null, [label]), body]));
    });
    return el("div", { class: "tv-jsonl" }, entries.length ? entries : [noneRecorded()]);
  }

  function textOrValue(value) {
    if (typeof value === "string") return el("pre", { class: "tv-text" }, [value]);
    return renderValue(value);
  }

  function renderChoice(choice) {
    choice = isObject(choice) ? choice : {};
    var message = isObject(choice.message) ? choice.message : {};
    var finish = choice.finish_reason;
    var parts = [el("p", { class: finish === "length" ? "tv-finish tv-alert" : "tv-finish" },
      ["Finish reason: " + scalarText(finish)])];
    var reasoning = truthy(message.reasoning_content) ? message.reasoning_content : message.reasoning;
    if (truthy(reasoning)) {
      parts.push(el("details", { class: "tv-thinking" }, [
        el("summary", null, ["Thinking"]), textOrValue(reasoning),
      ]));
    }
    var content = message.content;
    if ((typeof content === "string" && content.trim()) || (Array.isArray(content) && content.length)) {
      parts.push(el("section", { class: "tv-assistant" }, [
        el("h4", null, ["Assistant response"]), textOrValue(content),
      ]));
    } else {
      parts.push(el("p", { class: "tv-empty" }, ["No final text returned"]));
    }
    var toolCalls = message.tool_calls;
    if (Array.isArray(toolCalls) && toolCalls.length) {
      parts.push(el("details", { class: "tv-tool-calls" }, [
        el("summary", null, ["Tool calls (" + toolCalls.length + ")"]), renderValue(toolCalls),
      ]));
    }
    return el("div", { class: "tv-choice" }, parts);
  }

  function renderChatResponse(response) {
    var meta = el("dl", { class: "tv-object" }, [
      el("dt", { class: "tv-key" }, ["Model"]), el("dd", null, [scalarText(response.model)]),
      el("dt", { class: "tv-key" }, ["Request id"]), el("dd", null, [scalarText(response.id)]),
    ]);
    var usage = el("details", { class: "tv-entry" }, [
      el("summary", null, ["Token usage"]), renderValue(response.usage),
    ]);
    var choices = response.choices.map(renderChoice);
    if (!choices.length) choices = [el("p", { class: "tv-empty" }, ["No final text returned"])];
    return el("div", { class: "tv-chat-response" }, [meta, usage].concat(choices));
  }

  function renderChatRequest(request) {
    var items = request.messages.map(function (message) {
      if (!isObject(message)) return el("li", { class: "tv-message" }, [renderValue(message)]);
      var extra = {};
      Object.keys(message).forEach(function (key) {
        if (key !== "role" && key !== "content") extra[key] = message[key];
      });
      var children = [el("p", { class: "tv-role" }, [scalarText(message.role)]), textOrValue(message.content)];
      if (Object.keys(extra).length) children.push(renderValue(extra));
      return el("li", { class: "tv-message" }, children);
    });
    var parameters = {};
    Object.keys(request).forEach(function (key) {
      if (key !== "messages") parameters[key] = request[key];
    });
    return el("div", { class: "tv-chat-request" }, [
      el("h4", null, ["Messages (" + request.messages.length + ")"]),
      el("ol", { class: "tv-messages" }, items),
      el("h4", null, ["Generation parameters"]),
      renderValue(parameters),
    ]);
  }

  function renderBody(path, content) {
    var name = path.split("/").pop().toLowerCase();
    if (/\.jsonl$/.test(name)) return renderJsonl(content);
    var parsed = parse(content);
    if (parsed.ok && isObject(parsed.value)) {
      if (name === "response.json" && Array.isArray(parsed.value.choices)) {
        return renderChatResponse(parsed.value);
      }
      if (name === "request.json" && Array.isArray(parsed.value.messages)) {
        return renderChatRequest(parsed.value);
      }
    }
    if (parsed.ok && (isContainer(parsed.value) || /\.json$/.test(name))) {
      return renderValue(parsed.value);
    }
    return el("pre", { class: "tv-text" }, [content]);
  }

  function truncate(content) {
    var bytes = new global.TextEncoder().encode(content);
    if (bytes.length <= TRUNCATION_BYTES) return { content: content, truncated: false };
    // A cut inside a multi-byte character leaves one replacement character; drop it like Python's
    // "ignore" error handler does.
    var head = new global.TextDecoder("utf-8").decode(bytes.slice(0, TRUNCATION_BYTES));
    return { content: head.replace(/\uFFFD$/, ""), truncated: true };
  }

  function renderArtifact(path, content) {
    var cut = truncate(content);
    var parts = [];
    if (cut.truncated) parts.push(el("p", { class: "tv-note" }, [TRUNCATION_NOTE]));
    parts.push(renderBody(path, cut.content));
    return el("div", { class: "trace-viewer" }, parts);
  }

  global.AtlasTraceViewers = { renderArtifact: renderArtifact, renderValue: renderValue };
})(typeof window !== "undefined" ? window : globalThis);
