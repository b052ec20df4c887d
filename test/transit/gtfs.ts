// Small GTFS archives built from CSV files in the format the GTFS reference
// specifies, zipped as publishers ship them.
import { strToU8, zipSync } from "fflate";

const csv = (rows: string[]) => rows.join("\r\n") + "\r\n";

export function oxfordFeed(): Uint8Array {
  return zipSync({
    "agency.txt": strToU8(csv(["agency_id,agency_name,agency_url,agency_timezone,agency_lang", "OBC,Oxford Bus Company,https://www.oxfordbus.co.uk,Europe/London,en"])),
    "stops.txt": strToU8(
      csv([
        "stop_id,stop_code,stop_name,stop_lat,stop_lon,location_type,parent_station",
        "OXFSTN,,Oxford Station,51.7535,-1.2700,1,",
        "340000004R1,oxfagwap,Oxford Station Stop R1,51.75322,-1.26951,0,OXFSTN",
        "340000004R2,oxfagwat,Oxford Station Stop R2,51.75331,-1.26930,0,OXFSTN",
        "340000006G3,oxfgdgmt,Gloucester Green,51.75420,-1.26300,0,",
        '340001903OUT,oxfamjtp,"High Street, Queen\'s College",51.75267,-1.25175,0,',
      ]),
    ),
    "routes.txt": strToU8(
      csv([
        "route_id,agency_id,route_short_name,route_long_name,route_type",
        "OBC-1,OBC,1,Oxford Station - Cowley - Blackbird Leys,3",
        'OBC-X90,OBC,X90,"Oxford - London Victoria, via Marble Arch",3',
      ]),
    ),
    "trips.txt": strToU8(
      csv([
        "route_id,service_id,trip_id,trip_headsign,direction_id",
        "OBC-1,SAT,T1-SAT-1010,Blackbird Leys,0",
        "OBC-1,SAT,T1-SAT-1040,Blackbird Leys,0",
        "OBC-1,WKD,T1-WKD-1005,Blackbird Leys,0",
        "OBC-1,SAT,T1-SAT-2450,Cowley,0",
        "OBC-X90,EXTRA,X90-EXTRA-1020,London Victoria,0",
        "OBC-X90,SATX,X90-SATX-1030,London Victoria,0",
      ]),
    ),
    "stop_times.txt": strToU8(
      csv([
        "trip_id,arrival_time,departure_time,stop_id,stop_sequence,stop_headsign,pickup_type,drop_off_type",
        "T1-SAT-1010,10:05:00,10:05:00,340000004R1,1,,0,0",
        "T1-SAT-1010,10:10:00,10:10:00,340000006G3,2,,0,0",
        "T1-SAT-1010,10:16:00,10:16:00,340001903OUT,3,,0,0",
        "T1-SAT-1040,10:35:00,10:35:00,340000004R1,1,,0,0",
        "T1-SAT-1040,10:40:00,10:40:00,340000006G3,2,,0,0",
        "T1-SAT-1040,10:46:00,10:46:00,340001903OUT,3,,0,0",
        "T1-WKD-1005,10:00:00,10:00:00,340000004R1,1,,0,0",
        "T1-WKD-1005,10:05:00,10:05:00,340000006G3,2,,0,0",
        "T1-SAT-2450,24:45:00,24:45:00,340000004R1,1,,0,0",
        "T1-SAT-2450,24:50:00,24:50:00,340000006G3,2,,0,0",
        "X90-EXTRA-1020,10:20:00,10:20:00,340000006G3,1,,0,0",
        "X90-EXTRA-1020,10:27:00,10:27:00,340001903OUT,2,London,0,0",
        "X90-SATX-1030,10:30:00,10:30:00,340000006G3,1,,0,0",
      ]),
    ),
    "calendar.txt": strToU8(
      csv([
        "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date",
        "WKD,1,1,1,1,1,0,0,20260901,20270131",
        "SAT,0,0,0,0,0,1,0,20260901,20270131",
        "SATX,0,0,0,0,0,1,0,20260901,20270131",
      ]),
    ),
    "calendar_dates.txt": strToU8(csv(["service_id,date,exception_type", "EXTRA,20261121,1", "SATX,20261121,2"])),
    "feed_info.txt": strToU8(
      csv([
        "feed_publisher_name,feed_publisher_url,feed_lang,feed_start_date,feed_end_date,feed_version",
        "Oxford Bus Company,https://www.oxfordbus.co.uk,en,20260901,20270131,20261102",
      ]),
    ),
  });
}

// A feed its publisher stopped updating: the timetable ended in March.
export function oldTownFeed(): Uint8Array {
  return zipSync({
    "gtfs/agency.txt": strToU8(csv(["agency_name,agency_url,agency_timezone", "Old Town Trams,https://trams.example.org,Europe/London"])),
    // Quayside is listed twice, as some publishers' files do: the later row is the stop.
    "gtfs/stops.txt": strToU8(csv(["stop_id,stop_name,stop_lat,stop_lon", "MX,Market Cross,52.0001,-1.0002", "QY,Old Quay,52.0030,-1.0048", "QY,Quayside,52.0031,-1.0049"])),
    "gtfs/routes.txt": strToU8(csv(["route_id,route_short_name,route_long_name,route_type", "T1,T1,Market Cross - Quayside,0"])),
    "gtfs/trips.txt": strToU8(csv(["route_id,service_id,trip_id,trip_headsign", "T1,ALL,T1-0900,Quayside"])),
    "gtfs/stop_times.txt": strToU8(csv(["trip_id,arrival_time,departure_time,stop_id,stop_sequence", "T1-0900,09:00:00,09:00:00,MX,1", "T1-0900,09:06:00,09:06:00,QY,2"])),
    "gtfs/calendar.txt": strToU8(csv(["service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date", "ALL,1,1,1,1,1,1,1,20250301,20260301"])),
  });
}
