// Package weather is the weather tool: current conditions and a short
// forecast from Open-Meteo (no API key), with the place resolved through
// Open-Meteo's geocoding API.
package weather

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/planner-engine/planner/tools"
)

// Default endpoints of the Open-Meteo APIs.
const (
	DefaultGeocodingURL = "https://geocoding-api.open-meteo.com/v1/search"
	DefaultForecastURL  = "https://api.open-meteo.com/v1/forecast"
)

// ErrNotFound means the geocoder knows no place by that name.
var ErrNotFound = errors.New("place not found")

// ErrAPI means Open-Meteo answered with an error.
var ErrAPI = errors.New("open-meteo error")

// Config configures the tool. Zero values take the defaults.
type Config struct {
	// GeocodingURL is the geocoding endpoint. Default DefaultGeocodingURL.
	GeocodingURL string `mapstructure:"geocoding_url"`
	// ForecastURL is the forecast endpoint. Default DefaultForecastURL.
	ForecastURL string `mapstructure:"forecast_url"`
	// Days is the number of forecast days, 1–7. Default 3.
	Days int `mapstructure:"days"`
	// Timeout bounds one tool call. Default 15s.
	Timeout time.Duration `mapstructure:"timeout"`
	// Client is the HTTP client. Default http.DefaultClient with Timeout.
	Client *http.Client `mapstructure:"-"`
}

// Tool is the weather tool.
type Tool struct{ cfg Config }

// New returns a weather tool.
func New(cfg Config) *Tool {
	if cfg.GeocodingURL == "" {
		cfg.GeocodingURL = DefaultGeocodingURL
	}
	if cfg.ForecastURL == "" {
		cfg.ForecastURL = DefaultForecastURL
	}
	if cfg.Days <= 0 || cfg.Days > 7 {
		cfg.Days = 3
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout}
	}
	return &Tool{cfg: cfg}
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return "weather" }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	return "Current weather and a short forecast for a place. Input: a city name, e.g. \"Berlin\" or \"Paris, France\"."
}

// Schema implements tools.Schemer.
func (t *Tool) Schema() map[string]any {
	return tools.StringSchema("location", "city name, optionally with country")
}

// Meta implements tools.MetaProvider.
func (t *Tool) Meta() tools.Meta {
	return tools.Meta{ReadOnly: true, Network: true, Timeout: t.cfg.Timeout}
}

type place struct {
	Name      string  `json:"name"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Country   string  `json:"country"`
	Admin1    string  `json:"admin1"`
	Timezone  string  `json:"timezone"`
}

type forecast struct {
	Timezone     string            `json:"timezone"`
	CurrentUnits map[string]string `json:"current_units"`
	Current      struct {
		Time        string  `json:"time"`
		Temperature float64 `json:"temperature_2m"`
		Humidity    float64 `json:"relative_humidity_2m"`
		Wind        float64 `json:"wind_speed_10m"`
		Code        int     `json:"weather_code"`
	} `json:"current"`
	Daily struct {
		Time []string  `json:"time"`
		Max  []float64 `json:"temperature_2m_max"`
		Min  []float64 `json:"temperature_2m_min"`
		Code []int     `json:"weather_code"`
	} `json:"daily"`
}

// Call looks the place up and reports the weather.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	loc := strings.TrimSpace(input)
	if strings.HasPrefix(loc, "{") {
		var args struct {
			Location string `json:"location"`
			Input    string `json:"input"`
		}
		if err := json.Unmarshal([]byte(loc), &args); err != nil {
			return "", fmt.Errorf("%w: %w", tools.ErrBadInput, err)
		}
		loc = args.Location + args.Input
	}
	loc = strings.Trim(loc, "\"' ")
	if loc == "" {
		return "", fmt.Errorf("%w: give a place name", tools.ErrBadInput)
	}
	name, _, _ := strings.Cut(loc, ",")
	q := url.Values{"name": {strings.TrimSpace(name)}, "count": {"5"}, "language": {"en"}, "format": {"json"}}
	var geo struct {
		Results []place `json:"results"`
	}
	if err := t.get(ctx, t.cfg.GeocodingURL, q, &geo); err != nil {
		return "", err
	}
	if len(geo.Results) == 0 {
		return "", fmt.Errorf("%w: %q", ErrNotFound, loc)
	}
	p := geo.Results[0]
	if _, country, ok := strings.Cut(loc, ","); ok {
		want := strings.ToLower(strings.TrimSpace(country))
		for _, r := range geo.Results {
			if strings.Contains(strings.ToLower(r.Country), want) || strings.Contains(strings.ToLower(r.Admin1), want) {
				p = r
				break
			}
		}
	}
	fq := url.Values{
		"latitude":      {fmt.Sprintf("%.4f", p.Latitude)},
		"longitude":     {fmt.Sprintf("%.4f", p.Longitude)},
		"current":       {"temperature_2m,relative_humidity_2m,wind_speed_10m,weather_code"},
		"daily":         {"temperature_2m_max,temperature_2m_min,weather_code"},
		"timezone":      {"auto"},
		"forecast_days": {fmt.Sprint(t.cfg.Days)},
	}
	var f forecast
	if err := t.get(ctx, t.cfg.ForecastURL, fq, &f); err != nil {
		return "", err
	}
	unit := f.CurrentUnits["temperature_2m"]
	if unit == "" {
		unit = "°C"
	}
	var b strings.Builder
	where := p.Name
	if p.Country != "" {
		where += ", " + p.Country
	}
	fmt.Fprintf(&b, "Weather for %s (%.2f, %.2f) at %s local time: %s, %.1f%s, humidity %.0f%%, wind %.1f %s.",
		where, p.Latitude, p.Longitude, f.Current.Time, describe(f.Current.Code), f.Current.Temperature, unit,
		f.Current.Humidity, f.Current.Wind, orDefault(f.CurrentUnits["wind_speed_10m"], "km/h"))
	for i, day := range f.Daily.Time {
		if i >= len(f.Daily.Max) || i >= len(f.Daily.Min) || i >= len(f.Daily.Code) {
			break
		}
		fmt.Fprintf(&b, "\n%s: %s, %.1f to %.1f%s", day, describe(f.Daily.Code[i]), f.Daily.Min[i], f.Daily.Max[i], unit)
	}
	return b.String(), nil
}

func (t *Tool) get(ctx context.Context, endpoint string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("weather: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := t.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("weather: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("weather: reading response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(body, &e)
		if e.Reason == "" {
			e.Reason = http.StatusText(resp.StatusCode)
		}
		return fmt.Errorf("%w: HTTP %d: %s", ErrAPI, resp.StatusCode, e.Reason)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%w: decoding response: %w", ErrAPI, err)
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// describe turns a WMO weather code into words.
func describe(code int) string {
	switch {
	case code == 0:
		return "clear sky"
	case code <= 2:
		return "partly cloudy"
	case code == 3:
		return "overcast"
	case code == 45 || code == 48:
		return "fog"
	case code >= 51 && code <= 57:
		return "drizzle"
	case code >= 61 && code <= 67:
		return "rain"
	case code >= 71 && code <= 77:
		return "snow"
	case code >= 80 && code <= 82:
		return "rain showers"
	case code == 85 || code == 86:
		return "snow showers"
	case code >= 95:
		return "thunderstorm"
	}
	return fmt.Sprintf("weather code %d", code)
}
