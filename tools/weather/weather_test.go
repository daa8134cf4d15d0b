package weather_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/weather"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Response bodies follow Open-Meteo's documented JSON shapes.
const geocodeBody = `{"results":[{"id":2950159,"name":"Berlin","latitude":52.52437,"longitude":13.41053,"elevation":74.0,"feature_code":"PPLC","country_code":"DE","admin1_id":2950157,"timezone":"Europe/Berlin","population":3426354,"country_id":2921044,"country":"Germany","admin1":"Land Berlin"},{"id":5083330,"name":"Berlin","latitude":44.46867,"longitude":-71.18508,"country_code":"US","timezone":"America/New_York","country":"United States","admin1":"New Hampshire"}],"generationtime_ms":0.9}`

const forecastBody = `{"latitude":52.52,"longitude":13.419998,"generationtime_ms":0.06,"utc_offset_seconds":3600,"timezone":"Europe/Berlin","timezone_abbreviation":"GMT+1","elevation":38.0,"current_units":{"time":"iso8601","interval":"seconds","temperature_2m":"°C","relative_humidity_2m":"%","wind_speed_10m":"km/h","weather_code":"wmo code"},"current":{"time":"2026-11-29T14:00","interval":900,"temperature_2m":4.3,"relative_humidity_2m":81,"wind_speed_10m":14.2,"weather_code":3},"daily_units":{"time":"iso8601","temperature_2m_max":"°C","temperature_2m_min":"°C","weather_code":"wmo code"},"daily":{"time":["2026-11-29","2026-11-30"],"temperature_2m_max":[5.1,6.0],"temperature_2m_min":[1.2,2.4],"weather_code":[3,61]}}`

func server(t *testing.T, geo, fc string, status int) (*httptest.Server, *[]string) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/search":
			_, _ = w.Write([]byte(geo))
		case "/v1/forecast":
			w.WriteHeader(status)
			_, _ = w.Write([]byte(fc))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestWeatherReportsCurrentAndForecast(t *testing.T) {
	srv, seen := server(t, geocodeBody, forecastBody, http.StatusOK)
	tool := weather.New(weather.Config{GeocodingURL: srv.URL + "/v1/search", ForecastURL: srv.URL + "/v1/forecast", Days: 2})
	out, err := tool.Call(context.Background(), `{"location": "Berlin"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "Berlin, Germany")
	assert.Contains(t, out, "overcast, 4.3°C, humidity 81%, wind 14.2 km/h")
	assert.Contains(t, out, "2026-11-30: rain, 2.4 to 6.0°C")
	require.Len(t, *seen, 2)
	assert.Contains(t, (*seen)[0], "name=Berlin")
	assert.Contains(t, (*seen)[1], "latitude=52.5244")
	assert.Contains(t, (*seen)[1], "forecast_days=2")
	assert.True(t, tool.Meta().Network)
}

func TestWeatherPrefersTheNamedCountry(t *testing.T) {
	srv, seen := server(t, geocodeBody, forecastBody, http.StatusOK)
	tool := weather.New(weather.Config{GeocodingURL: srv.URL + "/v1/search", ForecastURL: srv.URL + "/v1/forecast"})
	_, err := tool.Call(context.Background(), "Berlin, New Hampshire")
	require.NoError(t, err)
	assert.Contains(t, (*seen)[1], "latitude=44.4687")
}

func TestWeatherErrors(t *testing.T) {
	t.Run("unknown place", func(t *testing.T) {
		srv, _ := server(t, `{"generationtime_ms":0.4}`, forecastBody, http.StatusOK)
		tool := weather.New(weather.Config{GeocodingURL: srv.URL + "/v1/search", ForecastURL: srv.URL + "/v1/forecast"})
		_, err := tool.Call(context.Background(), "Atlantis")
		assert.ErrorIs(t, err, weather.ErrNotFound)
	})
	t.Run("api error reason", func(t *testing.T) {
		srv, _ := server(t, geocodeBody, `{"error":true,"reason":"Cannot initialize WeatherVariable from invalid String value tempeture_2m"}`, http.StatusBadRequest)
		tool := weather.New(weather.Config{GeocodingURL: srv.URL + "/v1/search", ForecastURL: srv.URL + "/v1/forecast"})
		_, err := tool.Call(context.Background(), "Berlin")
		require.ErrorIs(t, err, weather.ErrAPI)
		assert.Contains(t, err.Error(), "HTTP 400")
		assert.Contains(t, err.Error(), "invalid String value")
	})
	t.Run("empty input", func(t *testing.T) {
		_, err := weather.New(weather.Config{}).Call(context.Background(), "  ")
		assert.ErrorIs(t, err, tools.ErrBadInput)
	})
}
