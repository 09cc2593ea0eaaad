// The webhook payload template renderer (src/notify/template.ts): Go-template syntax subset,
// JSON escaping, errors for broken templates, nothing reachable beyond the data.
import { describe, expect, it } from 'vitest';
import { renderTemplate, TemplateError, parseTemplate } from '../src/notify/template.js';

const data = {
  Name: 'Latency "p99"\nhigh',
  Threshold: 1.5,
  Count: 0,
  Datasets: ['api', 'web'],
  Alert: { Status: 'TRIGGERED', IsTest: false, Summary: 'Triggered: x' },
  Result: { Groups: [{ Group: { endpoint: '/a' }, Result: 3 }, { Group: { endpoint: '/b' }, Result: 1 }] },
  SLO: null,
  Vars: new Map([['team', 'core']]),
};
const r = (src: string, json = false) => renderTemplate(src, data, { json });

describe('webhook template renderer', () => {
  it('renders fields, literals, functions and pipes', () => {
    expect(r('{{ .Alert.Status }}')).toBe('TRIGGERED');
    expect(r('{{.Threshold}}')).toBe('1.5');
    expect(r('{{ .Vars.team }}/{{ .Vars.missing }}/')).toBe('core//');
    expect(r('{{ .SLO }}|{{ .SLO.Name }}|')).toBe('||');
    expect(r('{{ toJson .Datasets }}')).toBe('["api","web"]');
    expect(r('{{ .Datasets | toJson }}')).toBe('["api","web"]');
    expect(r('{{ .Datasets }}')).toBe('["api","web"]');
    expect(r('{{ upper .Alert.Status | lower }}')).toBe('triggered');
    expect(r('{{ join ", " .Datasets }}')).toBe('api, web');
    expect(r('{{ len .Datasets }} {{ len .Vars }}')).toBe('2 1');
    expect(r('{{ default "none" .Vars.missing }} {{ default "none" .Vars.team }}')).toBe('none core');
    expect(r('{{ "a\\tb" }} {{ `raw` }} {{ 42 }} {{ true }} {{ nil }}')).toBe('a\tb raw 42 true ');
    expect(r('{{ toJson .Vars }}')).toBe('{"team":"core"}');
    expect(r('{{ quote .Alert.Status }}')).toBe('"TRIGGERED"');
  });

  it('if / else if / else, range with $ and comparisons', () => {
    expect(r('{{ if eq .Alert.Status "OK" }}ok{{ else if eq .Alert.Status "TRIGGERED" "X" }}fire{{ else }}?{{ end }}')).toBe('fire');
    expect(r('{{ if .Count }}yes{{ else }}no{{ end }}')).toBe('no');
    expect(r('{{ if and (gt .Threshold 1) (not .Alert.IsTest) }}big{{ end }}')).toBe('big');
    expect(r('{{ range .Result.Groups }}{{ .Group.endpoint }}={{ .Result }} in {{ $.Alert.Status }};{{ end }}')).toBe('/a=3 in TRIGGERED;/b=1 in TRIGGERED;');
    expect(r('{{ range .Vars.nothing }}x{{ else }}empty{{ end }}')).toBe('empty');
    expect(r('{{/* a comment */}}a  {{- " b " -}}  c')).toBe('a b c');
  });

  it('JSON templates escape values and must produce JSON', () => {
    const out = r('{"name": "{{ .Name }}", "t": {{ .Threshold }}, "ds": {{ toJson .Datasets }}}', true);
    expect(JSON.parse(out)).toEqual({ name: 'Latency "p99"\nhigh', t: 1.5, ds: ['api', 'web'] });
    expect(() => r('{"ds": {{ .Alert.Status }}}', true)).toThrow(/not valid JSON/);
  });

  it('broken templates and unknown names are errors, never code', () => {
    for (const bad of ['{{ .Nope }}', '{{ .Alert.Nope }}', '{{ .constructor }}', '{{ .__proto__ }}', '{{ .Name.length }}']) {
      expect(() => r(bad), bad).toThrow(TemplateError);
    }
    for (const bad of ['{{ exec "ls" }}', '{{ if .Name }}x', '{{ end }}', '{{ .Name', '{{ "x }}', '{{ (.Name }}', '{{ .Name .Name }}', '{{ printf "%s" .Name }}']) {
      expect(() => parseTemplate(bad) && r(bad), bad).toThrow(TemplateError);
    }
    expect(() => r('{{ range .Name }}x{{ end }}')).toThrow(/range/);
    expect(() => r('{{ eq .Name }}')).toThrow(/at least 2/);
  });
});
