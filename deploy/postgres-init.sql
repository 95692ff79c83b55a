-- The HAPI FHIR server's own database beside the conversations' (run once, when the volume is new).
CREATE DATABASE hapi OWNER docgemma;
